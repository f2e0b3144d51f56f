# quizapp: exercise=debug_clip_before_unscale
# expect: fail loss-decreases
# expect: fail honest-fix: "5 forward passes where the fixed script runs 40"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: only the first 5 batches, too few to see the loss stall.

MAX_NORM = 0.5


def train(model, batches, optimizer, log=None):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type)
    losses = []
    for x, y in batches[:5]:
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    return losses
