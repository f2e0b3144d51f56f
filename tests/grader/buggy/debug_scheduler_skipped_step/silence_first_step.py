# quizapp: exercise=debug_scheduler_skipped_step
# expect: fail matches-fixed-run
# expect: fail lr-follows-real-steps: "ran at lr 0.12 where the schedule gives 0.02"
import torch
import torch.nn.functional as F

# A near miss: the first scheduler step left out, which silences torch's warning and nothing else.

INIT_SCALE = 2.0**24


def train(model, batches, optimizer, scheduler, log=None):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type, init_scale=INIT_SCALE)
    losses = []
    for step, (x, y) in enumerate(batches):
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if step > 0:
            scheduler.step()
        losses.append(loss.item())
    return losses
