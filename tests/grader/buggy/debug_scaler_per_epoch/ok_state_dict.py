# quizapp: exercise=debug_scaler_per_epoch
# expect: pass
import torch
import torch.nn.functional as F

# A right fix written another way: a scaler per epoch that loads the previous epoch's state_dict.

EPOCHS = 6


def train_one_epoch(model, batches, optimizer, scaler_state):
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type)
    if scaler_state is not None:
        scaler.load_state_dict(scaler_state)
    losses = []
    for x, y in batches:
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    return losses, scaler.state_dict()


def train(model, batches, optimizer, log=None):
    losses, state = [], None
    for epoch in range(EPOCHS):
        epoch_losses, state = train_one_epoch(model, batches, optimizer, state)
        losses += epoch_losses
    return losses
