# quizapp: exercise=magnitude_pruning
# expect: fail channels-stay-zero
# expect: fail stays-zero-new-optimizer: "grew back" "zeroing it once is not enough"
# expect: says stays-zero-new-optimizer: "SGD(lr=0.1, momentum=0.9) made after the pruning" "; with AdamW(lr=0.01"
# expect: fail stays-zero-optimizer-state: "this follows from the check \"Pruned weights stay exactly 0"
"""BUGGY (zero_once): the weights are zeroed once, with no mask applied afterwards: training regrows them."""

import numbers

import torch
from torch import nn

PRUNABLE = (nn.Linear, nn.Conv2d)


def _fraction(amount) -> float:
    # `not 0 <= amount <= 1` is also true for NaN. An int 0 or 1 is a fraction too, never a count.
    if not isinstance(amount, numbers.Real) or not 0 <= amount <= 1:
        raise ValueError(f"amount must be a fraction in [0, 1], got {amount!r}")
    return float(amount)


def _apply_mask(module, mask):
    with torch.no_grad():
        module.weight.mul_(mask)  # once, here: nothing keeps it at zero afterwards


def _mask(module) -> torch.Tensor:
    """A 0/1 mask of the weights still non-zero; the caller zeroes the weight through it once."""
    return (module.weight != 0).float()


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
            _apply_mask(m, mask)
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
        _apply_mask(module, mask)


def make_permanent(model) -> None:
    pass  # the weights are plain Parameters already
