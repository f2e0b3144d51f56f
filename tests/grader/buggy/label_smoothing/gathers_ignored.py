# quizapp: exercise=label_smoothing
# expect: error ignore-index all-rows-ignored
# expect: starts ignore-index: "with 10 rows of 5 classes, smoothing=0.1: RuntimeError"
# expect: starts all-rows-ignored: "with 10 rows of 5 classes, smoothing=0.1: RuntimeError"
"""Deliberately buggy: gathers at the ignored targets' index (-100), which is out of range."""

import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    log_probs = F.log_softmax(logits, dim=-1)
    keep = targets != ignore_index
    nll = -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    per_row = (1.0 - smoothing) * nll + smoothing * -log_probs.mean(dim=-1)
    return (per_row * keep).sum() / keep.sum()
