# quizapp: exercise=amp_training
# expect: pass
"""Right, written as Lightning's precision plugins run it: the iteration's forward and backward are a
closure. With float16 the scaler cannot take a closure, so it runs first and scaler.step follows;
with bfloat16 the closure goes to optimizer.step. The loader's length sets the epoch's mean."""

import torch


def train_with_amp(model, loader, optimizer, loss_fn, epochs, *,
                   device, amp_dtype=torch.float16, max_grad_norm=None) -> list[float]:
    scaling = amp_dtype == torch.float16
    scaler = torch.amp.GradScaler(device.type) if scaling else None
    model.train()
    epoch_losses = []
    for _ in range(epochs):
        total = 0.0
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)

            def closure(inputs=inputs, targets=targets):
                optimizer.zero_grad()
                with torch.autocast(device_type=device.type, dtype=amp_dtype):
                    loss = loss_fn(model(inputs), targets)
                (scaler.scale(loss) if scaling else loss).backward()
                if max_grad_norm is not None:
                    if scaling:
                        scaler.unscale_(optimizer)
                    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
                return loss

            if scaling:
                loss = closure()
                scaler.step(optimizer)
                scaler.update()
            else:
                loss = optimizer.step(closure)
            total += float(loss)
        epoch_losses.append(total / len(loader))
    return epoch_losses
