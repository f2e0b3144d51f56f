# quizapp: exercise=label_smoothing
# expect: fail ignore-index: "kept rows"
# expect: may-not-pass all-rows-ignored
"""Deliberately buggy: ignored rows are zeroed but still counted in the mean's denominator."""

import torch
import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    log_probs = F.log_softmax(logits, dim=-1)
    keep = targets != ignore_index
    nll = -log_probs.gather(-1, torch.where(keep, targets, 0).unsqueeze(-1)).squeeze(-1)
    per_row = (1.0 - smoothing) * nll + smoothing * -log_probs.mean(dim=-1)
    return torch.where(keep, per_row, 0.0).mean()
