# quizapp: exercise=amp_training
# expect: fail loss-scaled: "disabled" "this follows from"
# expect: may-not-pass loss-parity-bf16 autocast-forward grad-scaler
# expect: may-not-pass overflow-skips-step: "disabled"
# expect: may-not-pass clip-after-unscale: "disabled" "cannot be told"
# expect: lacks clip-after-unscale: "total norm"
# expect: starts autocast-forward: "your loop turns autocast/the scaler off when the device is not CUDA; this grade ran on CPU"
# expect: starts grad-scaler: "your loop turns autocast/the scaler off when the device is not CUDA; this grade ran on CPU"
# expect: device cpu
"""Buggy (on CPU): autocast and the scaler only when the device is CUDA, as many public loops do;
on a CPU grade the loop runs in plain float32 with a disabled scaler."""

from contextlib import nullcontext

import torch


def train_with_amp(model, loader, optimizer, loss_fn, epochs, *,
                   device, amp_dtype=torch.float16, max_grad_norm=None) -> list[float]:
    use_amp = device.type == "cuda"
    scaler = torch.amp.GradScaler(device.type, enabled=use_amp and amp_dtype == torch.float16)
    autocast = torch.autocast(device_type=device.type, dtype=amp_dtype) if use_amp else nullcontext()
    epoch_losses = []
    for _ in range(epochs):
        total, count = 0.0, 0
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad(set_to_none=True)
            with autocast:
                loss = loss_fn(model(inputs), targets)
            scaler.scale(loss).backward()
            if max_grad_norm is not None:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            total += loss.item()
            count += 1
        epoch_losses.append(total / count)
    return epoch_losses
