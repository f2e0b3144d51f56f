# quizapp: exercise=label_smoothing
"""Reference solution: label-smoothed cross-entropy from log_softmax, with ignore_index."""

import torch
import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100) -> torch.Tensor:
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    # log_softmax subtracts the row's max before exponentiating: finite for logits of any size.
    log_probs = F.log_softmax(logits, dim=-1)
    keep = targets != ignore_index
    # gather needs a valid class index on every row; ignored rows are masked out below.
    safe_targets = torch.where(keep, targets, torch.zeros_like(targets))
    nll = -log_probs.gather(-1, safe_targets.unsqueeze(-1)).squeeze(-1)
    # Cross-entropy against the uniform part of the target: -(1/C) * sum_c log p_c.
    uniform = -log_probs.mean(dim=-1)
    per_row = (1.0 - smoothing) * nll + smoothing * uniform
    # Ignored rows count neither in the sum nor in the number of rows the mean divides by.
    per_row = torch.where(keep, per_row, torch.zeros_like(per_row))
    return per_row.sum() / keep.sum()
