# quizapp: exercise=debug_clip_before_unscale
# expect: fail matches-fixed-run
# expect: fail loss-decreases: "the loss barely moves" "the clipping sees the right gradients"
import torch
import torch.nn.functional as F

# A near miss: the gradients divided by the scale by hand before clipping; scaler.step divides them again.

MAX_NORM = 0.5


def train(model, batches, optimizer, log=None):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type)
    losses = []
    for x, y in batches:
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        for p in model.parameters():
            if p.grad is not None:
                p.grad.div_(scaler.get_scale())
        torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    return losses
