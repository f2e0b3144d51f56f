# quizapp: exercise=amp_training
"""Hostile: finds the grader's skip through sys.modules, without importing anything of quizapp,
and calls it: the raise happens in the harness's own skip()."""

import sys

import torch


def train_with_amp(model, loader, optimizer, loss_fn, epochs, *, device, amp_dtype=torch.float16,
                   max_grad_norm=None):
    harness = next(m for m in list(sys.modules.values()) if "CheckSkipped" in vars(m) and "skip" in vars(m))
    harness.skip("not applicable on this machine")
