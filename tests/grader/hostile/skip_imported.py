# quizapp: exercise=amp_training
"""Hostile: raises the grader's own CheckSkipped, imported from the harness, so that every check
would be a skip."""

import torch

from quizapp.checking.harness import CheckSkipped


def train_with_amp(model, loader, optimizer, loss_fn, epochs, *, device, amp_dtype=torch.float16,
                   max_grad_norm=None):
    raise CheckSkipped("not applicable on this machine")
