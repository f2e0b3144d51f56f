# quizapp: exercise=magnitude_pruning
# expect: fail survivors-train: "made after the pruning: after 4 optimizer steps, 482 surviving weights, all negative, kept their values"
# expect: says survivors-train: "A mask built from w < eps without abs freezes every negative weight"
# expect: lacks survivors-train: "this follows from the check \""
"""BUGGY (freezes_negative_weights): the mask is applied in every forward pass, and the gradient of every
weight below EPS is zeroed as well, to keep pruned weights still; without abs() that test is true for
every negative weight, so the negative survivors never train."""

import numbers

import torch
from torch import nn

PRUNABLE = (nn.Linear, nn.Conv2d)
EPS = 1e-6


def _fraction(amount) -> float:
    if not isinstance(amount, numbers.Real) or not 0 <= amount <= 1:
        raise ValueError(f"amount must be a fraction in [0, 1], got {amount!r}")
    return float(amount)


def _refresh(module, inputs=None):
    module.weight = module.weight_orig * module.weight_mask


def _mask(module) -> torch.Tensor:
    if "weight_mask" not in module._buffers:
        trained = module.weight
        del module._parameters["weight"]
        module.register_parameter("weight_orig", trained)
        module.register_buffer("weight_mask", torch.ones_like(trained))
        module._refresh_hook = module.register_forward_pre_hook(_refresh)
        # meant to freeze the pruned weights; `trained < EPS` also holds for every negative one
        module._freeze_hook = trained.register_hook(
            lambda grad: torch.where(trained.detach() < EPS, torch.zeros_like(grad), grad))
        _refresh(module)
    return module.weight_mask


def prune_global(model, amount) -> dict[str, float]:
    amount = _fraction(amount)
    layers = [(name, m) for name, m in model.named_modules() if isinstance(m, PRUNABLE)]
    masks = [_mask(m) for _, m in layers]
    with torch.no_grad():
        scores = torch.cat([(m.weight_orig * mask).abs().flatten() for (_, m), mask in zip(layers, masks)])
        keep = torch.cat([mask.flatten() for mask in masks])
        alive = keep.nonzero().squeeze(1)
        k = round(amount * alive.numel())
        if k:
            keep[alive[scores[alive].argsort()[:k]]] = 0
        offset = 0
        for (_, m), mask in zip(layers, masks):
            mask.copy_(keep[offset:offset + mask.numel()].view_as(mask))
            offset += mask.numel()
            _refresh(m)
    return {name: (m.weight == 0).float().mean().item() for name, m in layers}


def prune_channels(module, amount) -> None:
    amount = _fraction(amount)
    mask = _mask(module)
    with torch.no_grad():
        norms = (module.weight_orig * mask).flatten(1).norm(dim=1)
        k = round(amount * norms.numel())
        if k:
            mask[norms.argsort()[:k]] = 0
        _refresh(module)


def make_permanent(model) -> None:
    for module in model.modules():
        if "weight_mask" not in module._buffers:
            continue
        module._refresh_hook.remove()
        module._freeze_hook.remove()
        del module._refresh_hook, module._freeze_hook
        trained = module.weight_orig
        with torch.no_grad():
            trained.mul_(module.weight_mask)
        del module.weight
        del module._parameters["weight_orig"]
        del module._buffers["weight_mask"]
        module.weight = trained
