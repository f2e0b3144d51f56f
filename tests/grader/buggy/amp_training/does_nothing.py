# quizapp: exercise=amp_training
# expect: fail loss-parity-fp16 loss-parity-bf16 close-to-fp32
# expect: skip returns-losses autocast-forward backward-outside-autocast master-weights-fp32 grad-scaler loss-scaled
# expect: skip step-through-scaler update-every-iteration zero-grad overflow-skips-step clip-after-unscale
"""Does nothing: returns one loss of 0 per epoch without running a single iteration."""

import torch


def train_with_amp(model, loader, optimizer, loss_fn, epochs, *,
                   device, amp_dtype=torch.float16, max_grad_norm=None) -> list[float]:
    return [0.0] * epochs
