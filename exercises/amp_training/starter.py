# quizapp: exercise=amp_training
"""Mixed-precision training loop. Grade it with: quizapp grade amp_training.py"""

import torch


def train_with_amp(model, loader, optimizer, loss_fn, epochs, *,
                   device, amp_dtype=torch.float16, max_grad_norm=None) -> list[float]:
    """Train `model` for `epochs` passes over `loader` with automatic mixed precision.

    model      -- already on `device`, float32 parameters (keep them float32)
    loader     -- re-iterable; yields (inputs, targets) CPU tensors: move them to `device`
    loss_fn    -- loss_fn(outputs, targets) -> scalar mean loss
    amp_dtype  -- torch.float16 (needs loss scaling) or torch.bfloat16 (does not)
    max_grad_norm -- if given, clip the (unscaled!) gradients to this total norm

    Returns one float per epoch: the mean of that epoch's iteration losses.
    """
    # TODO: create one GradScaler for the whole run (enabled for float16 only)
    # TODO: for each epoch, for each batch:
    #   - move the batch to `device`, zero the gradients
    #   - forward pass and loss under torch.autocast(device_type=device.type, dtype=amp_dtype)
    #   - backward on the scaled loss, outside autocast
    #   - if max_grad_norm: unscale, then clip
    #   - step through the scaler, then update the scaler
    # TODO: return the mean loss of each epoch
    raise NotImplementedError("train_with_amp is not written yet: see the TODOs in this file")
