# quizapp: exercise=label_smoothing
# expect: pass
"""Deliberately buggy: NOT a bug: an explicit smoothed target distribution, fed to cross_entropy as probabilities."""

import torch
import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0 <= smoothing <= 1:
        raise ValueError("smoothing must lie in [0, 1]")
    keep = targets != ignore_index
    kept_logits, kept_targets = logits[keep], targets[keep]
    classes = logits.shape[-1]
    dist = torch.full_like(kept_logits, smoothing / classes)
    dist.scatter_add_(1, kept_targets.unsqueeze(1), torch.full_like(kept_logits[:, :1], 1 - smoothing))
    return F.cross_entropy(kept_logits, dist)
