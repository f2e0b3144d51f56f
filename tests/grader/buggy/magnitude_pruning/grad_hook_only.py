# quizapp: exercise=magnitude_pruning
# expect: fail channels-stay-zero
# expect: fail stays-zero-optimizer-state: "made before the pruning, with 2 steps behind it"
# expect: says stays-zero-optimizer-state: "masking the gradient is not enough"
# expect: lacks stays-zero-optimizer-state: "this follows from the check \""
"""BUGGY (grad_hook_only): the weights are zeroed once and their gradient masked by a hook; an optimizer that ran before the pruning still moves them."""

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
    with torch.no_grad():
        module.weight.mul_(module.weight_mask)  # zero once; the gradient hook keeps the gradient at zero


def _mask(module) -> torch.Tensor:
    """The module's 0/1 mask; a hook multiplies the weight's gradient by it."""
    if "weight_mask" not in module._buffers:
        module.register_buffer("weight_mask", torch.ones_like(module.weight))
        mask = module.weight_mask
        module._prune_hook = module.weight.register_hook(lambda grad: grad * mask)
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
        current = torch.cat([(m.weight * mask).abs().flatten() for (_, m), mask in zip(layers, masks)])
        flat = torch.cat([mask.flatten() for mask in masks])
        alive = flat.nonzero().squeeze(1)
        k = round(amount * alive.numel())
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
        norms = (module.weight * mask).flatten(1).norm(p=2, dim=1)
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
        with torch.no_grad():
            module.weight.mul_(module.weight_mask)
        del module._buffers["weight_mask"]
