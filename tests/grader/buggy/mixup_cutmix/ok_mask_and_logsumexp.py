# quizapp: exercise=mixup_cutmix
# expect: pass
"""Deliberately buggy: NOT a bug: mixup through torch.lerp, CutMix through a boolean mask and torch.where
(the weight from the mask's mean), targets scattered row by row, and the loss from logsumexp."""

import math

import torch


def _check(n, lam, perm):
    if not (isinstance(lam, (int, float)) and 0.0 <= lam <= 1.0):
        raise ValueError(f"lam must lie in [0, 1], not {lam}")
    if sorted(perm.tolist()) != list(range(n)):
        raise ValueError("perm must be a permutation of range(N)")


def _targets(y, perm, num_classes, weight, dtype):
    n = len(y)
    out = torch.zeros(n, num_classes, dtype=dtype, device=y.device)
    out.scatter_add_(1, y.view(n, 1), torch.full((n, 1), weight, dtype=dtype, device=y.device))
    out.scatter_add_(1, y[perm].view(n, 1), torch.full((n, 1), 1.0 - weight, dtype=dtype, device=y.device))
    return out


def mixup(x, y, *, num_classes, lam, perm):
    _check(len(x), lam, perm)
    return torch.lerp(x[perm], x, lam), _targets(y, perm, num_classes, lam, x.dtype)


def cutmix(x, y, *, num_classes, lam, perm, center):
    _check(len(x), lam, perm)
    H, W = x.shape[-2:]
    side = math.sqrt(1.0 - lam)
    half_h, half_w = int(H * side) // 2, int(W * side) // 2
    rows = torch.arange(H, device=x.device).view(H, 1)
    cols = torch.arange(W, device=x.device).view(1, W)
    # Ends exclusive, clipped by the comparisons themselves: rows below 0 or past H do not exist.
    box = ((rows >= center[0] - half_h) & (rows < center[0] + half_h)
           & (cols >= center[1] - half_w) & (cols < center[1] + half_w))
    mixed = torch.where(box, x[perm], x)
    kept = 1.0 - box.double().mean().item()
    return mixed, _targets(y, perm, num_classes, kept, x.dtype)


def soft_target_cross_entropy(logits, targets):
    per_row = torch.logsumexp(logits, dim=-1) * targets.sum(dim=-1) - (targets * logits).sum(dim=-1)
    return per_row.mean()
