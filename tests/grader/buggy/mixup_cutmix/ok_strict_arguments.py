# quizapp: exercise=mixup_cutmix
# expect: pass
"""Correct, and strict about everything the contract leaves out: it refuses a lam that is not a Python float
and a center that is not a pair of ints inside the image, so a check that passes anything else shows."""

import math

import torch
import torch.nn.functional as F


def check(x, lam, perm):
    if type(lam) is not float or not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be a Python float in [0, 1], got {lam!r}")
    if perm.dtype != torch.long or perm.shape != (len(x),):
        raise ValueError(f"perm must be a LongTensor of {len(x)} entries")
    if not torch.equal(perm.sort().values, torch.arange(len(x), device=perm.device)):
        raise ValueError(f"perm is not a permutation: {perm.tolist()}")


def check_center(center, height, width):
    if not (isinstance(center, tuple) and len(center) == 2 and all(type(v) is int for v in center)):
        raise ValueError(f"center must be a tuple of two ints, got {center!r}")
    cy, cx = center
    if not (0 <= cy < height and 0 <= cx < width):
        raise ValueError(f"center {center} is outside the {height} x {width} image")


def targets(y, perm, num_classes, weight, dtype):
    own = F.one_hot(y, num_classes).to(dtype)
    return weight * own + (1 - weight) * own[perm]


def mixup(x, y, *, num_classes, lam, perm):
    check(x, lam, perm)
    return lam * x + (1 - lam) * x[perm], targets(y, perm, num_classes, lam, x.dtype)


def cutmix(x, y, *, num_classes, lam, perm, center):
    check(x, lam, perm)
    H, W = x.shape[-2:]
    check_center(center, H, W)
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
