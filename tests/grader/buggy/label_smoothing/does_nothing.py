# quizapp: exercise=label_smoothing
"""Does nothing: a loss of 0 that no logit reaches."""

import torch


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100) -> torch.Tensor:
    return torch.zeros((), device=logits.device)
