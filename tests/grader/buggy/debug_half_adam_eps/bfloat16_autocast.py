# quizapp: exercise=debug_half_adam_eps
# expect: fail honest-fix: "40 of 40 forward passes returned bfloat16 where the fixed script's forward passes return float16"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: autocast in bfloat16 instead of float16; a different precision, not the fix.


def train(model, batches, optimizer, log=None):
    device = next(model.parameters()).device
    losses = []
    for x, y in batches:
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
