# quizapp: exercise=debug_scaler_per_epoch
# expect: fail matches-fixed-run
# expect: fail no-steps-skipped-again: "skipped 48 of 48 optimizer steps (8, 8, 8, 8, 8, 8 in the 6 epochs)"
import torch
import torch.nn.functional as F

# A near miss: the GradScaler moved into the batch loop; every step starts again at 65536.

EPOCHS = 6


def train(model, batches, optimizer, log=None):
    device = next(model.parameters()).device
    losses = []
    for epoch in range(EPOCHS):
        for x, y in batches:
            scaler = torch.amp.GradScaler(device.type)
            with torch.autocast(device_type=device.type, dtype=torch.float16):
                loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
    return losses
