# quizapp: exercise=debug_scaler_per_epoch
# expect: pass
import torch
import torch.nn.functional as F

# A right fix written another way: one scaler made before the epochs, passed to each.

EPOCHS = 6


def train_one_epoch(model, batches, optimizer, scaler, device_type):
    losses = []
    for x, y in batches:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device_type, dtype=torch.float16):
            logits = model(x)
        loss = F.cross_entropy(logits.float(), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    return losses


def train(model, batches, optimizer, log=None):
    device_type = next(model.parameters()).device.type
    scaler = torch.amp.GradScaler(device_type)
    return [loss for _ in range(EPOCHS) for loss in train_one_epoch(model, batches, optimizer, scaler, device_type)]
