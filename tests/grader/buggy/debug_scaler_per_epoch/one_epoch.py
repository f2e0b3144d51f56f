# quizapp: exercise=debug_scaler_per_epoch
# expect: fail honest-fix: "8 forward passes where the fixed script runs 48"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: a single epoch, so only the first epoch's skips remain.

EPOCHS = 6


def train_one_epoch(model, batches, optimizer):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type)
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
    for epoch in range(1):
        losses += train_one_epoch(model, batches, optimizer)
    return losses
