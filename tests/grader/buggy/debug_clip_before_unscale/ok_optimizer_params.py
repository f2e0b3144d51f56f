# quizapp: exercise=debug_clip_before_unscale
# expect: pass
import torch
import torch.nn.functional as F

# A right fix written another way: unscale, then clip the optimizer's own parameter list.

MAX_NORM = 0.5


def train(model, batches, optimizer, log=None):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type)
    params = [p for group in optimizer.param_groups for p in group["params"]]
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(params, MAX_NORM)
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    return losses
