# quizapp: exercise=debug_clip_before_unscale
# expect: pass
import torch
import torch.nn.functional as F

# A right fix written another way: the scaled loss kept, gradients cleared after the step.

MAX_NORM = 0.5


def train(model, batches, optimizer, log=None):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type)
    losses = []
    optimizer.zero_grad(set_to_none=True)
    for x, y in batches:
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            logits = model(x)
            loss = F.cross_entropy(logits, y)
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=MAX_NORM, norm_type=2.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        losses.append(float(loss.detach()))
    return losses
