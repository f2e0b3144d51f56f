# quizapp: exercise=debug_scheduler_skipped_step
# expect: pass
import torch
import torch.nn.functional as F

# A right fix written another way: optimizer.step wrapped to count the steps that really ran.

INIT_SCALE = 2.0**24


def train(model, batches, optimizer, scheduler, log=None):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type, init_scale=INIT_SCALE)
    taken = [0]
    inner = optimizer.step

    def counted_step(*args, **kwargs):
        taken[0] += 1
        return inner(*args, **kwargs)

    optimizer.step = counted_step
    losses = []
    try:
        for x, y in batches:
            with torch.autocast(device_type=device.type, dtype=torch.float16):
                loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            before = taken[0]
            scaler.step(optimizer)
            scaler.update()
            if taken[0] > before:
                scheduler.step()
            losses.append(loss.item())
    finally:
        optimizer.step = inner
    return losses
