# quizapp: exercise=debug_scaler_per_epoch
# expect: fail honest-fix: "the loss was multiplied by 1024 at the first step where the fixed script's GradScaler starts at 65536"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: each epoch's scaler starts at 1024, so no epoch starts by overflowing.

EPOCHS = 6


def train_one_epoch(model, batches, optimizer):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type, init_scale=1024.0)
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
