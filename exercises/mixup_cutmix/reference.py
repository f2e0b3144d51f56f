# quizapp: exercise=mixup_cutmix
"""Reference solution: mixup, CutMix with the clipped box's label weight, and soft-target cross-entropy."""

import math

import torch
import torch.nn.functional as F


def check_args(x, lam, perm):
    # NaN fails every comparison, so `not 0 <= lam <= 1` catches it where `lam < 0 or lam > 1` does not.
    if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be a number in [0, 1], got {lam!r}")
    n = x.shape[0]
    if perm.shape != (n,) or not torch.equal(perm.sort().values, torch.arange(n, device=perm.device)):
        raise ValueError(f"perm must be a permutation of range({n}), got {perm.tolist()}")


def mixed_targets(y, perm, num_classes, weight, dtype):
    # One-hot rows in x's dtype: F.one_hot gives int64, and a float32 target would promote a bf16 loss.
    own = F.one_hot(y, num_classes).to(dtype)
    # The partner's label comes from the same perm as its pixels.
    return weight * own + (1.0 - weight) * own[perm]


def mixup(x, y, *, num_classes, lam, perm):
    check_args(x, lam, perm)
    # x[perm] is a new tensor: x itself is never written.
    mixed = lam * x + (1.0 - lam) * x[perm]
    return mixed, mixed_targets(y, perm, num_classes, lam, x.dtype)


def cutmix(x, y, *, num_classes, lam, perm, center):
    check_args(x, lam, perm)
    height, width = x.shape[-2:]
    cy, cx = center
    h, w = int(height * math.sqrt(1.0 - lam)), int(width * math.sqrt(1.0 - lam))
    # As timm's rand_bbox: half sizes with //, then clipped to the image (so an odd h loses a row).
    y0, y1 = min(max(cy - h // 2, 0), height), min(max(cy + h // 2, 0), height)
    x0, x1 = min(max(cx - w // 2, 0), width), min(max(cx + w // 2, 0), width)
    mixed = x.clone()
    mixed[:, :, y0:y1, x0:x1] = x[perm][:, :, y0:y1, x0:x1]
    # The label weight is the share of pixels actually kept, from the clipped box, not the drawn lam.
    kept = 1.0 - (y1 - y0) * (x1 - x0) / (height * width)
    return mixed, mixed_targets(y, perm, num_classes, kept, x.dtype)


def soft_target_cross_entropy(logits, targets):
    # log_softmax subtracts the row's max: finite for any finite logits, where log(softmax) gives -inf * 0 = NaN.
    return -(targets * F.log_softmax(logits, dim=-1)).sum(dim=-1).mean()
