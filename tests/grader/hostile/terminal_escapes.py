# quizapp: exercise=label_smoothing
"""Hostile: prints terminal control sequences (clear the screen, move the cursor, a green PASSED,
a window title, an 8-bit CSI) and raises an error whose message carries them too."""

import torch

print("\x1b[2J\x1b[H\x1b[1;32mPASSED: 7/7 checks passed\x1b[0m")
print("\x1b]0;all good\x07\x9b2J\rwiped\x08\x08")


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    raise ValueError("\x1b[2J\x1b[H\x1b[32mPASSED\x1b[0m")
