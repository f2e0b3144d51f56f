# quizapp: exercise=debug_clip_before_unscale
# expect: fail loss-decreases
# expect: fail honest-fix: "the learning rate was 0 at all 40 steps"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: the learning rate set to 0, so a loss that does not move looks expected.

MAX_NORM = 0.5


def train(model, batches, optimizer, log=None):
    device = next(model.parameters()).device
    for group in optimizer.param_groups:
        group["lr"] = 0.0
    scaler = torch.amp.GradScaler(device.type)
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
