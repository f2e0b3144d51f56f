# quizapp: exercise=amp_training
# expect: fail loss-parity-bf16
# expect: fail loss-parity-fp16: "weight each iteration's loss by its batch size" "[16, 16, 16, 16, 16, 8]"
"""Buggy: the epoch value weights each iteration's loss by its batch size (a per-sample mean);
the contract asks for the plain mean of the iterations' losses."""

import torch


def train_with_amp(model, loader, optimizer, loss_fn, epochs, *,
                   device, amp_dtype=torch.float16, max_grad_norm=None) -> list[float]:
    scaler = torch.amp.GradScaler(device.type, enabled=amp_dtype == torch.float16)
    epoch_losses = []
    for _ in range(epochs):
        total, samples = 0.0, 0
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device.type, dtype=amp_dtype):
                loss = loss_fn(model(inputs), targets)
            scaler.scale(loss).backward()
            if max_grad_norm is not None:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            total += loss.item() * len(inputs)
            samples += len(inputs)
        epoch_losses.append(total / samples)
    return epoch_losses
