# quizapp: exercise=amp_training
# expect: fail loss-parity-fp16
# expect: fail close-to-fp32: "float32" "%"
# expect: may-not-pass overflow-skips-step clip-after-unscale
"""Buggy: starts the scale so high that every step overflows"""

import torch


def train_with_amp(model, loader, optimizer, loss_fn, epochs, *,
                   device, amp_dtype=torch.float16, max_grad_norm=None) -> list[float]:
    # bfloat16 has float32's exponent range, so gradients do not underflow: no scaling needed.
    # A disabled scaler keeps one code path: its scale() is the identity and step() just steps.
    scaler = torch.amp.GradScaler(device.type, init_scale=2.0**40, enabled=amp_dtype == torch.float16)
    model.train()
    epoch_losses = []
    for _ in range(epochs):
        total, count = 0.0, 0
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device.type, dtype=amp_dtype):
                outputs = model(inputs)
                loss = loss_fn(outputs, targets)
            # Backward outside autocast: autograd runs each op's backward in the dtype its
            # forward used, so the context is not needed (and is not meant to wrap backward).
            scaler.scale(loss).backward()
            if max_grad_norm is not None:
                scaler.unscale_(optimizer)  # clip the true gradients, not the scaled ones
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            scaler.step(optimizer)  # skipped if any gradient is inf/NaN
            scaler.update()  # back off after an overflow, grow after a clean streak
            total += loss.item()
            count += 1
        epoch_losses.append(total / max(count, 1))
    return epoch_losses
