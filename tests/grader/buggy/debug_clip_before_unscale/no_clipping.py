# quizapp: exercise=debug_clip_before_unscale
# expect: fail honest-fix: "clip_grad_norm_(..., 0.5) ran 0 times where the fixed script clips 40 times"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: the clipping removed, so nothing shrinks the scaled gradients.

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
        pass
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    return losses
