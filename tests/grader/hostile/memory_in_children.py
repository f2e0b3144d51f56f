# quizapp: exercise=label_smoothing
"""Hostile: each process has its own address-space cap, so the memory is taken in processes it starts:
three fresh interpreters that each fill 600 MB and wait."""

import subprocess
import sys

FILL = "import time; b = b'x' * (600 * 2**20); time.sleep(120)"
children = [subprocess.Popen([sys.executable, "-c", FILL]) for _ in range(3)]
for child in children:
    child.wait()


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    raise NotImplementedError
