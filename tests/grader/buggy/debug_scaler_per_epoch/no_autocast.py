# quizapp: exercise=debug_scaler_per_epoch
# expect: fail honest-fix: "48 of 48 forward passes ran without autocast(float16)"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: autocast removed; float32 gradients do not overflow at this scale.

EPOCHS = 6


def train_one_epoch(model, batches, optimizer):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type)
    losses = []
    for x, y in batches:
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
