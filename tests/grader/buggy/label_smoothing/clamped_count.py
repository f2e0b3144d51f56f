# quizapp: exercise=label_smoothing
# expect: fail all-rows-ignored: "every row ignored" "expected nan (0 / 0" "got 0" "max(count, 1)"
"""Deliberately buggy: divides by max(kept rows, 1), so a batch whose rows are all ignored gives 0, not nan."""

import torch
import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    log_probs = F.log_softmax(logits, dim=-1)
    keep = targets != ignore_index
    nll = -log_probs.gather(-1, torch.where(keep, targets, 0).unsqueeze(-1)).squeeze(-1)
    per_row = (1.0 - smoothing) * nll + smoothing * -log_probs.mean(dim=-1)
    return torch.where(keep, per_row, 0.0).sum() / keep.sum().clamp(min=1)
