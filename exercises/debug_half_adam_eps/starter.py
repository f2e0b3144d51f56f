# quizapp: exercise=debug_half_adam_eps
"""Drill: a classifier cast to float16 and trained with Adam: the loss is NaN from step 1 on. Find the cause and fix it.

Run it:    python debug_half_adam_eps.py
Grade it:  quizapp grade debug_half_adam_eps.py   (the grader calls train() on its own model, data and Adam)

A small classifier trained in float16 to halve the memory of its weights, with Adam (lr 3e-3, the
default eps). The gradients look normal, but every loss after the first is NaN. Rebuilt small from
a real report: pytorch/pytorch#8860, "NaN loss when using half precision".
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES, HIDDEN, CLASSES = 10, 32, 4
STEPS, BATCH = 40, 32
LR = 3e-3


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
    """Train in float16, one optimizer step per batch; returns the loss of every step.

    `log`, if given, receives (step, loss, largest |gradient|, largest |weight| after the step).
    """
    model.half()  # float16 weights: half the memory, and fast float16 matmuls
    losses = []
    for step, (x, y) in enumerate(batches):
        logits = model(x.half())
        loss = F.cross_entropy(logits.float(), y)
        optimizer.zero_grad()
        loss.backward()
        grad = max(p.grad.abs().max().item() for p in model.parameters())
        optimizer.step()
        losses.append(loss.item())
        if log is not None:
            log(step, loss.item(), grad, max(p.abs().max().item() for p in model.parameters()))
    return losses


def main():
    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)

    def log(step, loss, grad, weight):
        if step < 3 or step % 10 == 0 or step == STEPS - 1:
            print(f"step {step:3d}  loss {loss:.4f}  max |grad| {grad:.3g}  max |weight| {weight:.3g}")

    train(model, make_batches(seed=1), optimizer, log)


if __name__ == "__main__":
    main()
