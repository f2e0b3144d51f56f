# quizapp: exercise=debug_clip_before_unscale
# expect: fail matches-fixed-run: "clip_grad_norm_ ran after the optimizer step" "in 40 of 40 iterations"
import torch
import torch.nn.functional as F

# A near miss: the clipping moved after scaler.step, where the gradients are unscaled but already used.

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

        scaler.step(optimizer)
        scaler.update()
        torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        losses.append(loss.item())
    return losses
