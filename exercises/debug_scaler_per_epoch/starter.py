# quizapp: exercise=debug_scaler_per_epoch
"""Drill: mixed precision keeps skipping steps, epoch after epoch. Find the cause and fix it.

Run it:    python debug_scaler_per_epoch.py
Grade it:  quizapp grade debug_scaler_per_epoch.py   (the grader calls train() on its own model and data)

A small classifier on raw, unnormalised sensor readings, trained for 6 epochs in float16 autocast
with a GradScaler. Rebuilt small from a real report: conservationtechlab/animl-py#298,
"GradScaler should be initialized once, not per epoch".
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES, HIDDEN, CLASSES = 10, 32, 4
EPOCHS, BATCHES, BATCH = 6, 8, 32
READING_SCALE = 30.0  # the sensors report values in the tens; nobody normalised them


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))

    def forward(self, x):
        return self.net(x)


def make_batches(seed, device="cpu"):
    """BATCHES batches (one epoch) of 4 overlapping Gaussian blobs, in raw units."""
    g = torch.Generator().manual_seed(seed)
    centers = 0.7 * torch.randn(CLASSES, FEATURES, generator=g)
    batches = []
    for _ in range(BATCHES):
        y = torch.randint(0, CLASSES, (BATCH,), generator=g)
        x = READING_SCALE * (centers[y] + torch.randn(BATCH, FEATURES, generator=g))
        batches.append((x.to(device), y.to(device)))
    return batches


def train_one_epoch(model, batches, optimizer):
    """One pass over the batches in float16 autocast; returns (losses, steps skipped, final scale)."""
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type)
    losses, skipped = [], 0
    for x, y in batches:
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scale = scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
        skipped += scaler.get_scale() < scale  # the scale goes down only after a skipped step
        losses.append(loss.item())
    return losses, skipped, scaler.get_scale()


def train(model, batches, optimizer, log=None):
    """EPOCHS passes over the same batches; returns the loss of every step of every epoch.

    `log`, if given, receives (epoch, mean loss, steps skipped, loss scale at the end of the epoch).
    """
    losses = []
    for epoch in range(EPOCHS):
        epoch_losses, skipped, scale = train_one_epoch(model, batches, optimizer)
        losses += epoch_losses
        if log is not None:
            log(epoch, sum(epoch_losses) / len(epoch_losses), skipped, scale)
    return losses


def main():
    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.002, momentum=0.9)

    def log(epoch, loss, skipped, scale):
        print(f"epoch {epoch}  mean loss {loss:7.4f}  skipped {skipped} of {BATCHES} steps  scale {scale:g}")

    train(model, make_batches(seed=1), optimizer, log)


if __name__ == "__main__":
    main()
