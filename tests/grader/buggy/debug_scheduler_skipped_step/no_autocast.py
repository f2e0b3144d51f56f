# quizapp: exercise=debug_scheduler_skipped_step
# expect: fail honest-fix: "40 of 40 forward passes ran without autocast(float16)"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: autocast removed; float32 gradients do not overflow at this scale.

INIT_SCALE = 2.0**24


def train(model, batches, optimizer, scheduler, log=None):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type, init_scale=INIT_SCALE)
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        losses.append(loss.item())
    return losses
