# quizapp: exercise=mixup_cutmix
# expect: fail mixup-targets: "got {class 1: 0.64, class 9: 0.28} and 0.01 on each other class"
# expect: says mixup-targets: "the targets carry label smoothing of 0.1" "smoothing / num_classes = 0.1 / 10 = 0.01"
# expect: says mixup-targets: "timm's Mixup" "label_smoothing=0.1" "without it your targets are right"
# expect: fail cutmix-label-weight: "should be 0.859375 on its label" "0.01 on each other class"
# expect: says cutmix-label-weight: "label smoothing of 0.1" "the clipped box's share, as they should be"
# expect: says cutmix-label-weight: "the check fails for the smoothing alone"
# expect: says cutmix-label-weight: "this follows from the check \"mixup: each target row is lam on its own label plus 1 - lam on its partner's\""
# expect: lacks cutmix-label-weight: "drawn lam" "h * w"
"""Deliberately buggy: the targets are label-smoothed as timm's Mixup makes them with its default
label_smoothing=0.1 (smoothing / num_classes on every class); pixels, partners and CutMix's clipped
weight are right."""

import math

import torch
import torch.nn.functional as F

SMOOTHING = 0.1


def check(x, lam, perm):
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam}")
    if not torch.equal(perm.sort().values, torch.arange(len(x), device=perm.device)):
        raise ValueError(f"perm is not a permutation: {perm.tolist()}")


def smoothed_one_hot(y, num_classes, dtype):
    off = SMOOTHING / num_classes
    on = 1.0 - SMOOTHING + off
    out = torch.full((len(y), num_classes), off, dtype=dtype, device=y.device)
    return out.scatter(1, y.view(-1, 1), on)


def targets(y, perm, num_classes, weight, dtype):
    return weight * smoothed_one_hot(y, num_classes, dtype) + (1 - weight) * smoothed_one_hot(y[perm], num_classes, dtype)


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
