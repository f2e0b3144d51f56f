# quizapp: exercise=label_smoothing
# expect: fail no-builtin-smoothing: "label_smoothing=0.1"
"""Deliberately buggy: the built-in label_smoothing did the work, through a reference to torch's kernel
taken at import, before a check could put a watcher in its place."""

import torch

_kernel = torch._C._nn.cross_entropy_loss


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    return _kernel(logits, targets, None, 1, ignore_index, smoothing)
