# quizapp: exercise=label_smoothing
# expect: fail low-and-high-precision: "float64 logits" "tolerance 1e-12" "float32 rounding"
"""Deliberately buggy: computes in float32 and casts back, fine for float16/bfloat16 logits, but float64 logits
get a float64 loss with only float32's precision (off by ~1e-7 of the value)."""

import torch
import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    log_probs = F.log_softmax(logits.float(), dim=-1)
    keep = targets != ignore_index
    nll = -log_probs.gather(-1, torch.where(keep, targets, 0).unsqueeze(-1)).squeeze(-1)
    per_row = (1.0 - smoothing) * nll + smoothing * -log_probs.mean(dim=-1)
    return (torch.where(keep, per_row, 0.0).sum() / keep.sum()).to(logits.dtype)
