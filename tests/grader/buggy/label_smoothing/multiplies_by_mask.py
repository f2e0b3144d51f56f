# quizapp: exercise=label_smoothing
# expect: fail all-rows-ignored: "20 of 20 gradient entries are NaN" "exactly 0" "inf * 0"
# expect: says all-rows-ignored: "torch.where(keep, per_row, 0)"
"""Deliberately buggy: masks by multiplying with keep; with every row ignored, d(sum / 0) = inf meets the mask's 0
and the gradient is inf * 0 = NaN, where F.cross_entropy's is 0."""

import torch
import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    log_probs = F.log_softmax(logits, dim=-1)
    keep = targets != ignore_index
    nll = -log_probs.gather(-1, torch.where(keep, targets, 0).unsqueeze(-1)).squeeze(-1)
    per_row = (1.0 - smoothing) * nll + smoothing * -log_probs.mean(dim=-1)
    return (per_row * keep).sum() / keep.sum()
