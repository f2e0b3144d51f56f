# quizapp: exercise=magnitude_pruning
# expect: fail global-count: "68 became zero, expected round(0.3 * 1881) = 564: every nn.Linear (head.1, head.4) kept all its weights"
# expect: says global-count: "68 = round(0.3 * 225) counts the nn.Conv2d weights alone"
# expect: fail global-ranking: "every nn.Linear (head.1, head.4) kept all its weights"
# expect: fail second-call-among-survivors: "this follows from the check \"One ranking across all layers"
"""BUGGY (ranks_conv_only): only the Conv2d weights are ranked and pruned, so every nn.Linear keeps all
its weights; the sparsity of every layer is still returned."""

import numbers

import torch
from torch import nn

RANKED = (nn.Conv2d,)  # should be (nn.Linear, nn.Conv2d)


def _fraction(amount) -> float:
    if not isinstance(amount, numbers.Real) or not 0 <= amount <= 1:
        raise ValueError(f"amount must be a fraction in [0, 1], got {amount!r}")
    return float(amount)


def _use_mask(module, inputs=None):
    module.weight = module.weight_orig * module.weight_mask


def _mask(module) -> torch.Tensor:
    if "weight_mask" not in module._buffers:
        trained = module.weight
        del module._parameters["weight"]
        module.register_parameter("weight_orig", trained)
        module.register_buffer("weight_mask", torch.ones_like(trained))
        module._mask_hook = module.register_forward_pre_hook(_use_mask)
        _use_mask(module)
    return module.weight_mask


def prune_global(model, amount) -> dict[str, float]:
    amount = _fraction(amount)
    convs = [m for m in model.modules() if isinstance(m, RANKED)]
    masks = [_mask(m) for m in convs]
    if convs:
        with torch.no_grad():
            scores = torch.cat([(m.weight_orig * mask).abs().flatten() for m, mask in zip(convs, masks)])
            keep = torch.cat([mask.flatten() for mask in masks])
            alive = keep.nonzero().squeeze(1)
            k = round(amount * alive.numel())
            if k:
                keep[alive[torch.topk(scores[alive], k, largest=False).indices]] = 0
            offset = 0
            for m, mask in zip(convs, masks):
                mask.copy_(keep[offset:offset + mask.numel()].view_as(mask))
                offset += mask.numel()
                _use_mask(m)
    return {name: (m.weight == 0).float().mean().item() for name, m in model.named_modules()
            if isinstance(m, (nn.Linear, nn.Conv2d))}


def prune_channels(module, amount) -> None:
    amount = _fraction(amount)
    mask = _mask(module)
    with torch.no_grad():
        norms = (module.weight_orig * mask).flatten(1).norm(p=2, dim=1)
        k = round(amount * norms.numel())
        if k:
            mask[torch.topk(norms, k, largest=False).indices] = 0
        _use_mask(module)


def make_permanent(model) -> None:
    for module in model.modules():
        if "weight_mask" not in module._buffers:
            continue
        module._mask_hook.remove()
        del module._mask_hook
        trained = module.weight_orig
        with torch.no_grad():
            trained.mul_(module.weight_mask)
        del module.weight
        del module._parameters["weight_orig"]
        del module._buffers["weight_mask"]
        module.weight = trained
