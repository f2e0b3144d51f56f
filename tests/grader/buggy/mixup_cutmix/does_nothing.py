# quizapp: exercise=mixup_cutmix
"""Does nothing: hands x back unmixed with all-zero targets, and a loss of 0."""

import torch


def mixup(x, y, *, num_classes, lam, perm):
    return x, torch.zeros(len(y), num_classes, dtype=x.dtype, device=x.device)


def cutmix(x, y, *, num_classes, lam, perm, center):
    return x, torch.zeros(len(y), num_classes, dtype=x.dtype, device=x.device)


def soft_target_cross_entropy(logits, targets) -> torch.Tensor:
    return torch.zeros((), device=logits.device)
