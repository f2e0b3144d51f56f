# quizapp: exercise=debug_clip_before_unscale
# expect: fail loss-decreases
# expect: fail honest-fix: "40 of 40 forward passes ran without autocast(float16)"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: autocast removed; the clipping still sees scaled gradients.

MAX_NORM = 0.5


def train(model, batches, optimizer, log=None):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type)
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    return losses
