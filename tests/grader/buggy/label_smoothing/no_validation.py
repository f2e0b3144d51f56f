# quizapp: exercise=label_smoothing
# expect: fail validation
"""Deliberately buggy: smoothing outside [0, 1] is accepted."""

import torch
import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    log_probs = F.log_softmax(logits, dim=-1)
    keep = targets != ignore_index
    nll = -log_probs.gather(-1, torch.where(keep, targets, 0).unsqueeze(-1)).squeeze(-1)
    per_row = (1.0 - smoothing) * nll + smoothing * -log_probs.mean(dim=-1)
    return torch.where(keep, per_row, 0.0).sum() / keep.sum()
