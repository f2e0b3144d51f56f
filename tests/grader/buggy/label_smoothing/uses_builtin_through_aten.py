# quizapp: exercise=label_smoothing
# expect: fail no-builtin-smoothing: "label_smoothing=0.1"
"""Deliberately buggy: the built-in label_smoothing did the work, called as an aten operator, past
the Python function a check that patches torch._C._nn would watch."""

import torch


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    return torch.ops.aten.cross_entropy_loss(logits, targets, None, 1, ignore_index, smoothing)
