# quizapp: exercise=magnitude_pruning
# expect: pass
"""Right, another way: an amount that is not a number raises TypeError (as torch's own pruning does),
a number outside [0, 1] ValueError; the mask is applied with torch.where in a forward pre-hook."""

import math

import torch
from torch import nn


def _fraction(amount) -> float:
    if isinstance(amount, bool) or not isinstance(amount, (int, float)):
        raise TypeError(f"amount must be an int or a float, not {type(amount).__name__}")
    if math.isnan(amount) or not 0 <= amount <= 1:
        raise ValueError(f"amount must be in [0, 1], got {amount!r}")
    return float(amount)


def _masked(module, inputs=None):
    module.weight = torch.where(module.weight_keep, module.weight_orig, torch.zeros_like(module.weight_orig))


def _keep(module) -> torch.Tensor:
    if "weight_keep" not in module._buffers:
        trained = module._parameters.pop("weight")
        module.register_parameter("weight_orig", trained)  # the same object: older optimizers still train it
        module.register_buffer("weight_keep", torch.ones_like(trained, dtype=torch.bool))
        module._masked_hook = module.register_forward_pre_hook(_masked)
        _masked(module)
    return module.weight_keep


def prune_global(model, amount) -> dict[str, float]:
    amount = _fraction(amount)
    named = [(name, m) for name, m in model.named_modules() if isinstance(m, (nn.Linear, nn.Conv2d))]
    keeps = [_keep(m) for _, m in named]
    with torch.no_grad():
        keep = torch.cat([k.flatten() for k in keeps])
        values = torch.cat([m.weight_orig.abs().flatten() for _, m in named])
        values[~keep] = math.inf  # pruned ones never come up again
        n = round(amount * int(keep.sum()))
        keep[values.argsort()[:n]] = False
        for (_, m), k in zip(named, keep.split([k.numel() for k in keeps])):
            m.weight_keep.copy_(k.view_as(m.weight_keep))
            _masked(m)
    return {name: float((m.weight == 0).sum() / m.weight.numel()) for name, m in named}


def prune_channels(module, amount) -> None:
    amount = _fraction(amount)
    keep = _keep(module)
    with torch.no_grad():
        rows = torch.where(keep, module.weight_orig, 0.0).flatten(1).pow(2).sum(1).sqrt()
        keep[rows.argsort()[:round(amount * rows.numel())]] = False
        _masked(module)


def make_permanent(model) -> None:
    for module in model.modules():
        if "weight_keep" not in module._buffers:
            continue
        module._masked_hook.remove()
        del module._masked_hook
        trained = module._parameters.pop("weight_orig")
        with torch.no_grad():
            trained.masked_fill_(~module.weight_keep, 0.0)
        del module.weight
        del module._buffers["weight_keep"]
        module.weight = trained
