# quizapp: exercise=label_smoothing
"""Hostile: sys.exit() with a code whose repr (and str) raise, in every check."""

import sys


class Code:
    def __repr__(self):
        raise RuntimeError("no repr for you")

    __str__ = __repr__


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    sys.exit(Code())
