# quizapp: exercise=amp_training
# expect: fail autocast-forward grad-scaler loss-scaled
# expect: fail loss-parity-bf16: "the forward ran outside autocast" "this follows from the check"
# expect: fail clip-after-unscale: "no GradScaler was created" "this follows from the check"
# expect: may-not-pass step-through-scaler update-every-iteration overflow-skips-step
# expect: lacks loss-parity-bf16: "before scaler.unscale_"
# expect: lacks clip-after-unscale: "before scaler.unscale_"
"""Buggy: no autocast and no GradScaler at all, with clipping on the plain gradients."""

import torch


def train_with_amp(model, loader, optimizer, loss_fn, epochs, *,
                   device, amp_dtype=torch.float16, max_grad_norm=None) -> list[float]:
    epoch_losses = []
    for _ in range(epochs):
        total, count = 0.0, 0
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(inputs), targets)
            loss.backward()
            if max_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            optimizer.step()
            total += loss.item()
            count += 1
        epoch_losses.append(total / count)
    return epoch_losses
