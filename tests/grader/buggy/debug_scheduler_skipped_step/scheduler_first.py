# quizapp: exercise=debug_scheduler_skipped_step
# expect: fail matches-fixed-run
# expect: fail lr-follows-real-steps: "ran at lr 0.16 where the schedule gives 0.02"
import torch
import torch.nn.functional as F

# A near miss: the scheduler stepped before the optimizer; it still advances on every skipped step.

INIT_SCALE = 2.0**24


def train(model, batches, optimizer, scheduler, log=None):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type, init_scale=INIT_SCALE)
    losses = []
    for x, y in batches:
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scheduler.step()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    return losses
