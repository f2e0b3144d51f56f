# quizapp: exercise=label_smoothing
# expect: fail ignore-index: "uniform"
"""Deliberately buggy: F.nll_loss drops ignored rows, but the smoothing term still averages every row."""

import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    log_probs = F.log_softmax(logits, dim=-1)
    nll = F.nll_loss(log_probs, targets, ignore_index=ignore_index)
    uniform = -log_probs.mean(dim=-1).mean()
    return (1.0 - smoothing) * nll + smoothing * uniform
