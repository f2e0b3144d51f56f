# quizapp: exercise=mixup_cutmix
# expect: fail mixup-pixels mixup-targets cutmix-box cutmix-label-weight soft-ce-matches-torch validation
# expect: skip labels-follow-pixels targets-shape-dtype x-y-unchanged soft-ce-large-logits
"""Does nothing: hands x back unmixed with all-zero targets, and a loss of 0."""

import torch


def mixup(x, y, *, num_classes, lam, perm):
    return x, torch.zeros(len(y), num_classes, dtype=x.dtype, device=x.device)


def cutmix(x, y, *, num_classes, lam, perm, center):
    return x, torch.zeros(len(y), num_classes, dtype=x.dtype, device=x.device)


def soft_target_cross_entropy(logits, targets) -> torch.Tensor:
    return torch.zeros((), device=logits.device)
