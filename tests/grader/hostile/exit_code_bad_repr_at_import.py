# quizapp: exercise=label_smoothing
"""Hostile: sys.exit() at import, with a code whose repr (and str) raise."""

import sys


class Code:
    def __repr__(self):
        raise RuntimeError("no repr for you")

    __str__ = __repr__


sys.exit(Code())
