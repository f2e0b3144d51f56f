# quizapp: exercise=magnitude_pruning
# expect: pass
"""Right, another way: the weight stays the module's own Parameter, and a forward pre-hook zeroes the
pruned entries in place before every forward pass (whatever the optimizer did since)."""

import torch
from torch import nn


def _fraction(amount) -> float:
    try:
        value = float(amount)
    except (TypeError, ValueError):
        raise ValueError(f"amount must be a number, got {amount!r}") from None
    if isinstance(amount, str) or not (0.0 <= value <= 1.0):
        raise ValueError(f"amount must be in [0, 1], got {amount!r}")
    return value


def _keep(module) -> torch.Tensor:
    if not hasattr(module, "keep"):
        module.register_buffer("keep", torch.ones_like(module.weight, dtype=torch.bool))
        keep = module.keep

        def zero_pruned(mod, inputs):
            with torch.no_grad():
                mod.weight.mul_(keep)

        module.keep_hook = module.register_forward_pre_hook(zero_pruned)
    return module.keep


def prune_global(model, amount) -> dict[str, float]:
    amount = _fraction(amount)
    layers = [(name, m) for name, m in model.named_modules() if isinstance(m, (nn.Linear, nn.Conv2d))]
    keeps = [_keep(m) for _, m in layers]
    with torch.no_grad():
        scores = []
        for (_, m), keep in zip(layers, keeps):
            # the dead ones rank last (inf), so they are never chosen again
            scores.append(torch.where(keep, m.weight.abs(), torch.full_like(m.weight, float("inf"))).flatten())
        scores = torch.cat(scores)
        alive = int(sum(int(k.sum()) for k in keeps))
        n = round(amount * alive)
        order = torch.argsort(scores)[:n]
        chosen = torch.zeros_like(scores, dtype=torch.bool)
        chosen[order] = True
        start = 0
        for (_, m), keep in zip(layers, keeps):
            keep &= ~chosen[start:start + keep.numel()].view_as(keep)
            start += keep.numel()
            m.weight.mul_(keep)
    return {name: (m.weight == 0).sum().item() / m.weight.numel() for name, m in layers}


def prune_channels(module, amount) -> None:
    amount = _fraction(amount)
    keep = _keep(module)
    with torch.no_grad():
        norms = torch.linalg.vector_norm((module.weight * keep).reshape(len(keep), -1), ord=2, dim=1)
        n = round(amount * len(norms))
        for row in torch.argsort(norms)[:n].tolist():
            keep[row] = False
        module.weight.mul_(keep)


def make_permanent(model) -> None:
    for module in model.modules():
        if hasattr(module, "keep_hook"):
            module.keep_hook.remove()
            with torch.no_grad():
                module.weight.mul_(module.keep)
            del module.keep_hook
            del module.keep
