# quizapp: exercise=label_smoothing
# expect: fail no-builtin-smoothing: "label_smoothing=0.1"
"""Deliberately buggy: right numbers, but the built-in label_smoothing argument did the work."""

from torch.nn.functional import cross_entropy


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    return cross_entropy(logits, targets, label_smoothing=smoothing, ignore_index=ignore_index)
