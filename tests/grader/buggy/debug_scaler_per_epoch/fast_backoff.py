# quizapp: exercise=debug_scaler_per_epoch
# expect: fail matches-fixed-run
# expect: fail no-steps-skipped-again: "skipped 6 of 48 optimizer steps (1, 1, 1, 1, 1, 1 in the 6 epochs)"
import torch
import torch.nn.functional as F

# A near miss: each epoch's scaler backs off 16x per overflow, so each epoch skips fewer steps.

EPOCHS = 6


def train_one_epoch(model, batches, optimizer):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type, backoff_factor=1 / 16)
    losses = []
    for x, y in batches:
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    return losses


def train(model, batches, optimizer, log=None):
    losses = []
    for epoch in range(EPOCHS):
        losses += train_one_epoch(model, batches, optimizer)
    return losses
