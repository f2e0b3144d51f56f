# quizapp: exercise=magnitude_pruning
# expect: pass
"""Right, with torch.nn.utils.parametrize: the mask is a parametrization, so module.weight is computed
as original * mask on every access; make_permanent removes the parametrization, keeping its value."""

import math

import torch
import torch.nn.utils.parametrize as parametrize
from torch import nn


class Mask(nn.Module):
    def __init__(self, like):
        super().__init__()
        self.register_buffer("mask", torch.ones_like(like))

    def forward(self, weight):
        return weight * self.mask


def _check(amount):
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or math.isnan(amount) or not 0 <= amount <= 1:
        raise ValueError(f"amount must be in [0, 1], got {amount!r}")


def _mask(module):
    if not parametrize.is_parametrized(module, "weight"):
        parametrize.register_parametrization(module, "weight", Mask(module.weight))
    return module.parametrizations.weight[0].mask


def prune_global(model, amount) -> dict[str, float]:
    _check(amount)
    layers = {name: m for name, m in model.named_modules() if isinstance(m, (nn.Linear, nn.Conv2d))}
    masks = [_mask(m) for m in layers.values()]
    with torch.no_grad():
        values = [m.weight.detach().abs() for m in layers.values()]
        alive = sorted(v.item() for v, k in zip(torch.cat([v.flatten() for v in values]),
                                                torch.cat([k.flatten() for k in masks])) if k)
        n = round(amount * len(alive))
        if n:
            threshold = alive[n - 1]  # no ties in float weights: the n smallest are those <= threshold
            for value, mask in zip(values, masks):
                mask[(value <= threshold) & (mask == 1)] = 0
    return {name: float((m.weight == 0).sum()) / m.weight.numel() for name, m in layers.items()}


def prune_channels(module, amount) -> None:
    _check(amount)
    mask = _mask(module)
    with torch.no_grad():
        norms = torch.sqrt((module.weight ** 2).sum(dim=tuple(range(1, module.weight.dim()))))
        n = round(amount * len(norms))
        mask[norms.argsort()[:n]] = 0


def make_permanent(model) -> None:
    for module in list(model.modules()):
        if parametrize.is_parametrized(module, "weight"):
            parametrize.remove_parametrizations(module, "weight", leave_parametrized=True)
