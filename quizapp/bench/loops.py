"""The loops the learner's is measured against. Both keep the exercise's signature and its contract
(the epoch's mean loss is returned), so the bench drives every loop the same way.

- `float32_loop`: the baseline, the same loop with no autocast and no scaler, reading `loss.item()`
  every step as the contract's reference does, so that a speedup is the precision's and not the sync's.
- `no_sync_loop`: the reference AMP loop with the losses summed on the device and read once an epoch:
  set beside the learner's loop, it shows what a host-device sync every step costs. (A float16 loop
  still waits once a step inside GradScaler.step, which reads its inf check on the host.)
"""

from __future__ import annotations

import torch


def float32_loop(model, loader, optimizer, loss_fn, epochs, *, device, amp_dtype=None, max_grad_norm=None):
    model.train()
    losses = []
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
        losses.append(total / max(count, 1))
    return losses


def no_sync_loop(model, loader, optimizer, loss_fn, epochs, *, device, amp_dtype=torch.float16, max_grad_norm=None):
    scaler = torch.amp.GradScaler(device.type, enabled=amp_dtype == torch.float16)
    model.train()
    losses = []
    for _ in range(epochs):
        total, count = torch.zeros((), device=device), 0
        for inputs, targets in loader:
            inputs, targets = inputs.to(device, non_blocking=True), targets.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device.type, dtype=amp_dtype):
                loss = loss_fn(model(inputs), targets)
            scaler.scale(loss).backward()
            if max_grad_norm is not None:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            total += loss.detach().float()
            count += 1
        losses.append(total.item() / max(count, 1))  # one sync an epoch
    return losses
