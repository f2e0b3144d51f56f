# quizapp: exercise=debug_clip_before_unscale
"""The fixed script: the gradients are unscaled before they are clipped.

Run it:    python debug_clip_before_unscale.py
Grade it:  quizapp grade debug_clip_before_unscale.py   (the grader calls train() on its own model and data)

A small classifier trained in float16 autocast with a GradScaler and gradient clipping
(max_norm 0.5), the usual recipe. Rebuilt small from a real report: milesial/Pytorch-UNet#468,
"Gradients are clipped before the unscaling".
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES, HIDDEN, CLASSES = 10, 32, 4
STEPS, BATCH = 40, 32
MAX_NORM = 0.5


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


def train(model, batches, optimizer, log=None):
    """One optimizer step per batch in float16 autocast; returns the loss of every step.

    `log`, if given, receives (step, loss, gradient norm before clipping, loss scale).
    """
    device = next(model.parameters()).device
    scaler = torch.amp.GradScaler(device.type)
    losses = []
    for step, (x, y) in enumerate(batches):
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        # The gradients are still multiplied by the loss scale (65536 at first): clipping them now
        # measures a norm 65536 times too large and shrinks the update by as much. unscale_ divides
        # them by the scale first; scaler.step sees they are unscaled and does not divide again.
        scaler.unscale_(optimizer)
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
        if log is not None:
            log(step, loss.item(), norm.item(), scaler.get_scale())
    return losses


def main():
    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def log(step, loss, norm, scale):
        if step % 5 == 0 or step == STEPS - 1:
            print(f"step {step:3d}  loss {loss:.4f}  grad norm {norm:10.4g} (max_norm {MAX_NORM})  scale {scale:g}")

    train(model, make_batches(seed=1), optimizer, log)


if __name__ == "__main__":
    main()
