# quizapp: exercise=amp_training
"""Does nothing: returns one loss of 0 per epoch without running a single iteration."""

import torch


def train_with_amp(model, loader, optimizer, loss_fn, epochs, *,
                   device, amp_dtype=torch.float16, max_grad_norm=None) -> list[float]:
    return [0.0] * epochs
