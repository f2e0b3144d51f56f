# quizapp: exercise=debug_scheduler_skipped_step
# expect: pass
import torch
import torch.nn.functional as F

# A right fix written another way: the scale read before backward; a lower scale after update() means a skip.

INIT_SCALE = 2.0**24


def train(model, batches, optimizer, scheduler, log=None):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type, init_scale=INIT_SCALE)
    losses = []
    for x, y in batches:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scale_before = scaler.get_scale()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        skipped = scaler.get_scale() < scale_before
        if not skipped:
            scheduler.step()
        losses.append(float(loss.detach()))
    return losses
