# quizapp: exercise=debug_scaler_per_epoch
# expect: fail no-steps-skipped-again
# expect: fail honest-fix: "the learning rate at step 0 was 0.003 where the fixed script uses 0.002"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: a higher learning rate to make up for the skipped steps.

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
    for group in optimizer.param_groups:
        group["lr"] *= 1.5
    losses = []
    for epoch in range(EPOCHS):
        losses += train_one_epoch(model, batches, optimizer)
    return losses
