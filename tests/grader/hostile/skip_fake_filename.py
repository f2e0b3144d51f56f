# quizapp: exercise=amp_training
"""Hostile: raises CheckSkipped from code compiled under the checks module's own file name, so that
a look at file names alone would take the raise for the checks'."""

import sys

import torch


def train_with_amp(model, loader, optimizer, loss_fn, epochs, *, device, amp_dtype=torch.float16,
                   max_grad_norm=None):
    checks = next(m for name, m in list(sys.modules.items()) if name.endswith("checks") and "CHECKS" in vars(m))
    skipped = next(vars(m)["CheckSkipped"] for m in list(sys.modules.values()) if "CheckSkipped" in vars(m))
    exec(compile("raise CheckSkipped('not applicable')", checks.__file__, "exec"), {"CheckSkipped": skipped})
