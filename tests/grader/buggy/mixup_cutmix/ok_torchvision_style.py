# quizapp: exercise=mixup_cutmix
# expect: pass
"""Deliberately buggy: NOT a bug: written as torchvision.transforms.v2's MixUp and CutMix write it (a half side
int(0.5 * sqrt(1 - lam) * W), ends clamped with torch.clamp, lam_adjusted from the clamped box, in-place ops on
fresh copies only), with F.cross_entropy taking the probability targets directly."""

import math

import torch
import torch.nn.functional as F


def _validate(x, lam, perm):
    if isinstance(lam, bool) or not isinstance(lam, (int, float)) or math.isnan(lam) or not 0 <= lam <= 1:
        raise ValueError(f"lam={lam!r}: expected a number in [0, 1]")
    n = x.shape[0]
    if perm.numel() != n or torch.bincount(perm.flatten().clamp(0, n), minlength=n + 1)[:n].ne(1).any():
        raise ValueError(f"perm={perm.tolist()} is not a permutation of range({n})")


def _mix_targets(y, perm, num_classes, lam, dtype):
    one_hot = F.one_hot(y, num_classes=num_classes).to(dtype)
    return one_hot[perm].mul_(1.0 - lam).add_(one_hot.mul(lam))


def mixup(x, y, *, num_classes, lam, perm):
    _validate(x, lam, perm)
    output = x[perm].mul_(1.0 - lam).add_(x.mul(lam))
    return output, _mix_targets(y, perm, num_classes, lam, x.dtype)


def cutmix(x, y, *, num_classes, lam, perm, center):
    _validate(x, lam, perm)
    H, W = x.shape[-2:]
    r_y, r_x = center
    r = 0.5 * math.sqrt(1.0 - lam)
    r_w_half, r_h_half = int(r * W), int(r * H)
    x1 = int(torch.clamp(torch.tensor(r_x - r_w_half), min=0, max=W))
    y1 = int(torch.clamp(torch.tensor(r_y - r_h_half), min=0, max=H))
    x2 = int(torch.clamp(torch.tensor(r_x + r_w_half), min=0, max=W))
    y2 = int(torch.clamp(torch.tensor(r_y + r_h_half), min=0, max=H))
    output = x.clone()
    output[..., y1:y2, x1:x2] = x[perm][..., y1:y2, x1:x2]
    lam_adjusted = float(1.0 - (x2 - x1) * (y2 - y1) / (W * H))
    return output, _mix_targets(y, perm, num_classes, lam_adjusted, x.dtype)


def soft_target_cross_entropy(logits, targets):
    return F.cross_entropy(logits, targets)
