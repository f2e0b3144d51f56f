# quizapp: exercise=debug_half_adam_eps
# expect: pass
import torch
import torch.nn.functional as F

# A right fix written another way: only the forward under autocast, the loss on float32 logits.


def train(model, batches, optimizer, log=None):
    device = next(model.parameters()).device
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            logits = model(x)
        loss = F.cross_entropy(logits.float(), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
