# quizapp: exercise=mixup_cutmix
# expect: fail labels-follow-pixels: "row 0's pixels are mixed with sample perm[0] = 2" "the label of sample 5"
# expect: says labels-follow-pixels: ".flip(0)" "y[perm]"
"""Deliberately buggy: the pixels use perm, but the labels are paired as timm's mixup_target pairs them,
with y.flip(0) (sample i with N - 1 - i): most rows get the label of an image that is not in them."""

import math

import torch
import torch.nn.functional as F


def check(x, lam, perm):
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam}")
    if not torch.equal(perm.sort().values, torch.arange(len(x), device=perm.device)):
        raise ValueError(f"perm is not a permutation: {perm.tolist()}")


def targets(y, num_classes, weight, dtype):
    return weight * F.one_hot(y, num_classes).to(dtype) + (1 - weight) * F.one_hot(y.flip(0), num_classes).to(dtype)


def mixup(x, y, *, num_classes, lam, perm):
    check(x, lam, perm)
    return lam * x + (1 - lam) * x[perm], targets(y, num_classes, lam, x.dtype)


def cutmix(x, y, *, num_classes, lam, perm, center):
    check(x, lam, perm)
    H, W = x.shape[-2:]
    h, w = int(H * math.sqrt(1 - lam)), int(W * math.sqrt(1 - lam))
    y0, y1 = min(max(center[0] - h // 2, 0), H), min(max(center[0] + h // 2, 0), H)
    x0, x1 = min(max(center[1] - w // 2, 0), W), min(max(center[1] + w // 2, 0), W)
    mixed = x.clone()
    mixed[:, :, y0:y1, x0:x1] = x[perm][:, :, y0:y1, x0:x1]
    return mixed, targets(y, num_classes, 1 - (y1 - y0) * (x1 - x0) / (H * W), x.dtype)


def soft_target_cross_entropy(logits, targets):
    return -(targets * F.log_softmax(logits, dim=-1)).sum(-1).mean()
