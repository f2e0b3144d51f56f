# quizapp: exercise=mixup_cutmix
# expect: fail soft-ce-large-logits: "got 26.2495" "right for ordinary logits" "an epsilon"
"""Deliberately buggy: the loss takes log(softmax) with the probabilities clamped to 1e-12 against log(0):
finite, but wrong for large logits."""

import math

import torch
import torch.nn.functional as F


def check(x, lam, perm):
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam}")
    if not torch.equal(perm.sort().values, torch.arange(len(x), device=perm.device)):
        raise ValueError(f"perm is not a permutation: {perm.tolist()}")


def targets(y, perm, num_classes, weight, dtype):
    own = F.one_hot(y, num_classes).to(dtype)
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
    probs = F.softmax(logits, dim=-1).clamp(min=1e-12)
    return -(targets * torch.log(probs)).sum(-1).mean()
