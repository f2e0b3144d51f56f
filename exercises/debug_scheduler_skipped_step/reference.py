# quizapp: exercise=debug_scheduler_skipped_step
"""The fixed script: the schedule advances only when the optimizer really stepped.

Run it:    python debug_scheduler_skipped_step.py
Grade it:  quizapp grade debug_scheduler_skipped_step.py   (the grader calls train() on its own model, data,
           optimizer and scheduler)

A small classifier trained in float16 autocast with a GradScaler that starts at a large loss scale
(2**24), and a linear warm-up over the first 10 steps stepped once per batch. Rebuilt small from a
real report: pytorch/pytorch#55585, "[autocast scaler] unable to prevent lr scheduler before
optimizer step warning".
"""

import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES, HIDDEN, CLASSES = 10, 32, 4
STEPS, BATCH = 40, 32
PEAK_LR, WARMUP = 0.2, 10
INIT_SCALE = 2.0**24  # a large first loss scale: the scaler backs off from it in the first steps


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))

    def forward(self, x):
        return self.net(x)


def make_batches(seed, device="cpu"):
    """STEPS batches of 4 overlapping Gaussian blobs."""
    g = torch.Generator().manual_seed(seed)
    centers = 0.7 * torch.randn(CLASSES, FEATURES, generator=g)
    batches = []
    for _ in range(STEPS):
        y = torch.randint(0, CLASSES, (BATCH,), generator=g)
        x = centers[y] + torch.randn(BATCH, FEATURES, generator=g)
        batches.append((x.to(device), y.to(device)))
    return batches


def warmup_factor(step):
    """The schedule: the learning rate rises linearly to its peak over WARMUP optimizer steps."""
    return min(1.0, (step + 1) / WARMUP)


def make_scheduler(optimizer):
    return torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_factor)


def train(model, batches, optimizer, scheduler, log=None):
    """One iteration per batch in float16 autocast; returns the loss of every iteration.

    `log`, if given, receives (iteration, loss, learning rate used, loss scale after the update).
    """
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type, init_scale=INIT_SCALE)
    losses = []
    for step, (x, y) in enumerate(batches):
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        lr = optimizer.param_groups[0]["lr"]
        scale = scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
        # scaler.step skips optimizer.step() when the gradients hold inf or NaN, and update() then
        # lowers the scale. A skipped step is no step of the schedule either: stepping the scheduler
        # anyway runs the warm-up ahead of the optimizer (torch warns "Detected call of
        # lr_scheduler.step() before optimizer.step()" the first time).
        if scaler.get_scale() >= scale:
            scheduler.step()
        losses.append(loss.item())
        if log is not None:
            log(step, loss.item(), lr, scaler.get_scale())
    return losses


def main():
    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=PEAK_LR, momentum=0.9)
    scheduler = make_scheduler(optimizer)
    last_scale = [INIT_SCALE]

    def log(step, loss, lr, scale):
        skipped = scale < last_scale[0]  # the scaler backs off when it skips a step
        last_scale[0] = scale
        if step < 14 or step % 5 == 0 or step == STEPS - 1 or skipped:
            note = "  (step skipped: inf/NaN gradients)" if skipped else ""
            print(f"iter {step:3d}  loss {loss:.4f}  lr {lr:.3f}  scale {scale:9.0f}{note}")

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        train(model, make_batches(seed=1), optimizer, scheduler, log)


if __name__ == "__main__":
    main()
