# quizapp: exercise=label_smoothing
# expect: fail low-and-high-precision: "bfloat16 logits" "expected a bfloat16 loss" "got float32" "dtype=torch.float32"
# expect: says low-and-high-precision: ".to(logits.dtype)"
"""Deliberately buggy: like HF transformers' LabelSmoother, sums the smoothing term with dtype=torch.float32
("works for fp16 input too, by upcasting"), so float16 and bfloat16 logits give a float32 loss."""

import torch
import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    log_probs = -F.log_softmax(logits, dim=-1)
    keep = targets != ignore_index
    nll = log_probs.gather(-1, torch.where(keep, targets, 0).unsqueeze(-1)).squeeze(-1)
    # Upcast the sum over classes to float32, for float16 inputs.
    smoothed = log_probs.sum(dim=-1, dtype=torch.float32)
    nll = nll.masked_fill(~keep, 0.0).sum() / keep.sum()
    smoothed = smoothed.masked_fill(~keep, 0.0).sum() / (keep.sum() * logits.shape[-1])
    return (1 - smoothing) * nll + smoothing * smoothed
