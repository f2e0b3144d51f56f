# quizapp: exercise=debug_scaler_per_epoch
# expect: fail honest-fix: "nan_to_num was called 192 times"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: inf gradients replaced by zeros, so the scaler never skips.

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
        for p in model.parameters():
            if p.grad is not None:
                p.grad.nan_to_num_(nan=0.0, posinf=0.0, neginf=0.0)
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    return losses


def train(model, batches, optimizer, log=None):
    losses = []
    for epoch in range(EPOCHS):
        losses += train_one_epoch(model, batches, optimizer)
    return losses
