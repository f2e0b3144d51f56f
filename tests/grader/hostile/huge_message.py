# quizapp: exercise=label_smoothing
"""Hostile: an exception with a message of 5 MB in every check."""


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    raise ValueError("x" * 5_000_000)
