# quizapp: exercise=debug_clip_before_unscale
# expect: fail honest-fix: "the loss was multiplied by 1 at the first step where the fixed script's GradScaler starts at 65536"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: the loss scale started at 1, so the clipped gradients are barely scaled.

MAX_NORM = 0.5


def train(model, batches, optimizer, log=None):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type, init_scale=1.0)
    losses = []
    for x, y in batches:
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    return losses
