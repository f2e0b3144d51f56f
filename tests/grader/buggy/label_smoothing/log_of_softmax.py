# quizapp: exercise=label_smoothing
# expect: fail large-logits-stable: "log_softmax"
# expect: may-not-pass low-and-high-precision: "float16 logits" "the loss is inf" "F.log_softmax"
"""Deliberately buggy: log of softmax, which underflows to log(0) = -inf for large logits."""

import torch
import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    log_probs = torch.log(F.softmax(logits, dim=-1))
    keep = targets != ignore_index
    nll = -log_probs.gather(-1, torch.where(keep, targets, 0).unsqueeze(-1)).squeeze(-1)
    per_row = (1.0 - smoothing) * nll + smoothing * -log_probs.mean(dim=-1)
    return torch.where(keep, per_row, 0.0).sum() / keep.sum()
