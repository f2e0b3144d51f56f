# quizapp: exercise=mixup_cutmix
# expect: fail targets-shape-dtype: "bfloat16" "targets is float32" "timm's one_hot" "dtype=x.dtype"
"""Deliberately buggy: one-hot targets made as timm's one_hot makes them, torch.full without dtype=:
float32 whatever x's dtype."""

import math

import torch
import torch.nn.functional as F


def check(x, lam, perm):
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam}")
    if not torch.equal(perm.sort().values, torch.arange(len(x), device=perm.device)):
        raise ValueError(f"perm is not a permutation: {perm.tolist()}")


def targets(y, perm, num_classes, weight, dtype):
    own = torch.full((len(y), num_classes), 0.0, device=y.device).scatter_(1, y.view(-1, 1), 1.0)
    return weight * own + (1 - weight) * own[perm]


def mixup(x, y, *, num_classes, lam, perm):
    check(x, lam, perm)
    mixed = lam * x + (1 - lam) * x[perm]
    return mixed, targets(y, perm, num_classes, lam, x.dtype)


def cutmix(x, y, *, num_classes, lam, perm, center):
    check(x, lam, perm)
    H, W = x.shape[-2:]
    cy, cx = center
    h, w = int(H * math.sqrt(1 - lam)), int(W * math.sqrt(1 - lam))
    y0, y1 = min(max(cy - h // 2, 0), H), min(max(cy + h // 2, 0), H)
    x0, x1 = min(max(cx - w // 2, 0), W), min(max(cx + w // 2, 0), W)
    mixed = x.clone()
    mixed[:, :, y0:y1, x0:x1] = x[perm][:, :, y0:y1, x0:x1]
    kept = 1 - (y1 - y0) * (x1 - x0) / (H * W)
    return mixed, targets(y, perm, num_classes, kept, x.dtype)


def soft_target_cross_entropy(logits, targets):
    return -(targets * F.log_softmax(logits, dim=-1)).sum(-1).mean()
