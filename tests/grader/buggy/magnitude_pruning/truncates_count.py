# quizapp: exercise=magnitude_pruning
# expect: fail global-count: "1316 became zero, expected round(0.7 * 1881) = 1317: 1316.7 was truncated"
"""BUGGY (truncates_count): int(amount * alive) truncates where the contract rounds."""

import numbers

import torch
from torch import nn

PRUNABLE = (nn.Linear, nn.Conv2d)


def _fraction(amount) -> float:
    # `not 0 <= amount <= 1` is also true for NaN. An int 0 or 1 is a fraction too, never a count.
    if not isinstance(amount, numbers.Real) or not 0 <= amount <= 1:
        raise ValueError(f"amount must be a fraction in [0, 1], got {amount!r}")
    return float(amount)


def _apply_mask(module, inputs=None):
    # The weight the forward uses, recomputed before every forward: whatever an optimizer did to
    # weight_orig (momentum, Adam's moments, weight decay), a pruned entry is 0 here.
    module.weight = module.weight_orig * module.weight_mask


def _mask(module) -> torch.Tensor:
    """The module's 0/1 mask, set up on first use: the trained Parameter moves to weight_orig (the same
    object, so an optimizer built earlier keeps training it), the mask is a buffer (never trained)."""
    if "weight_mask" not in module._buffers:
        weight = module.weight
        del module._parameters["weight"]
        module.register_parameter("weight_orig", weight)
        module.register_buffer("weight_mask", torch.ones_like(weight))
        module._prune_hook = module.register_forward_pre_hook(_apply_mask)
        _apply_mask(module)
    return module.weight_mask


def prune_global(model, amount) -> dict[str, float]:
    amount = _fraction(amount)
    layers = [(name, m) for name, m in model.named_modules() if isinstance(m, PRUNABLE)]
    if not layers:
        return {}
    masks = [_mask(m) for _, m in layers]
    with torch.no_grad():
        # One ranking over all layers, by the values a forward pass would use now; only weights still
        # alive take part, so a second call prunes a fraction of the survivors.
        current = torch.cat([(m.weight_orig * mask).abs().flatten() for (_, m), mask in zip(layers, masks)])
        flat = torch.cat([mask.flatten() for mask in masks])
        alive = flat.nonzero().squeeze(1)
        k = int(amount * alive.numel())
        if k:
            flat[alive[torch.topk(current[alive], k, largest=False).indices]] = 0
        start = 0
        for (_, m), mask in zip(layers, masks):
            mask.copy_(flat[start:start + mask.numel()].view_as(mask))
            start += mask.numel()
            _apply_mask(m)
    return {name: (m.weight == 0).float().mean().item() for name, m in layers}


def prune_channels(module, amount) -> None:
    amount = _fraction(amount)
    mask = _mask(module)
    with torch.no_grad():
        # One L2 norm per output channel (a row of a Linear's weight, a filter of a Conv2d's).
        norms = (module.weight_orig * mask).flatten(1).norm(p=2, dim=1)
        k = round(amount * norms.numel())
        if k:
            mask[torch.topk(norms, k, largest=False).indices] = 0
        _apply_mask(module)


def make_permanent(model) -> None:
    for module in model.modules():
        if "weight_mask" not in module._buffers:
            continue  # never pruned: nothing to remove
        module._prune_hook.remove()
        del module._prune_hook
        weight = module.weight_orig
        with torch.no_grad():
            weight.mul_(module.weight_mask)  # computed afresh: module.weight may predate the last step
        del module.weight  # the computed tensor
        del module._parameters["weight_orig"]
        del module._buffers["weight_mask"]
        module.weight = weight  # the same Parameter, registered as `weight` again
