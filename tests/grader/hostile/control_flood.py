# quizapp: exercise=label_smoothing
"""Hostile: an exception whose message is nothing but control characters, each escaped as four."""


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    raise ValueError("\x1b" * 50_000)
