# quizapp: exercise=label_smoothing
# expect: fail gradient-matches-torch
# expect: fail value-matches-torch: "C - 1" "expected loss"
# expect: may-not-pass ignore-index large-logits-stable low-and-high-precision
"""Deliberately buggy: smoothing spread over the C - 1 other classes (the true class gets exactly 1 - eps)."""

import torch
import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    log_probs = F.log_softmax(logits, dim=-1)
    keep = targets != ignore_index
    nll = -log_probs.gather(-1, torch.where(keep, targets, 0).unsqueeze(-1)).squeeze(-1)
    others = (-log_probs.sum(dim=-1) - nll) / (logits.shape[-1] - 1)
    per_row = (1.0 - smoothing) * nll + smoothing * others
    return torch.where(keep, per_row, 0.0).sum() / keep.sum()
