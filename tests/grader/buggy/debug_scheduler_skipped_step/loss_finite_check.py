# quizapp: exercise=debug_scheduler_skipped_step
# expect: fail matches-fixed-run
# expect: fail lr-follows-real-steps: "Optimizer step 0 (iteration 6, after 6 iterations whose step the GradScaler skipped) ran at lr 0.14 where the schedule gives 0.02"
import torch
import torch.nn.functional as F

# A near miss: the scheduler skipped when the loss is not finite; the loss is finite when only the scaled gradients overflow.

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
        scaler.step(optimizer)
        scaler.update()
        if torch.isfinite(loss):
            scheduler.step()
        losses.append(loss.item())
    return losses
