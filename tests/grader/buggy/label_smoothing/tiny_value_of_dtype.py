# quizapp: exercise=label_smoothing
# expect: fail all-rows-ignored: "every row ignored" "expected nan" "got 0" "tiny epsilon"
# expect: fail low-and-high-precision: "bfloat16 logits" "raised TypeError: Does not support dtype torch.bfloat16"
# expect: says low-and-high-precision: "line 21:" "F.cross_entropy accepts bfloat16 logits"
"""Deliberately buggy: like allennlp's sequence_cross_entropy_with_logits, divides by count + tiny_value_of_dtype,
which raises for bfloat16 and returns 0 instead of nan for a batch whose rows are all ignored (two bugs)."""

import torch
import torch.nn.functional as F


def tiny_value_of_dtype(dtype):
    """As allennlp.nn.util.tiny_value_of_dtype: a small value to add to a denominator so it is never zero."""
    if not dtype.is_floating_point:
        raise TypeError("Only supports floating point dtypes.")
    if dtype == torch.float or dtype == torch.double:
        return 1e-13
    elif dtype == torch.half:
        return 1e-4
    else:
        raise TypeError("Does not support dtype " + str(dtype))


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    log_probs = F.log_softmax(logits, dim=-1)
    weights = (targets != ignore_index).to(log_probs.dtype)
    smoothing_value = smoothing / logits.shape[-1]
    safe = torch.where(targets != ignore_index, targets, 0).unsqueeze(-1)
    smoothed_targets = torch.full_like(log_probs, smoothing_value).scatter_(-1, safe, 1.0 - smoothing + smoothing_value)
    per_row = -(log_probs * smoothed_targets).sum(-1) * weights
    return per_row.sum() / (weights.sum() + tiny_value_of_dtype(per_row.dtype))
