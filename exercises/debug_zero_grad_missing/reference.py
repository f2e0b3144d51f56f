# quizapp: exercise=debug_zero_grad_missing
"""The fixed script: the gradients are cleared before every backward, not once before the loop.

Run it:    python debug_zero_grad_missing.py
Grade it:  quizapp grade debug_zero_grad_missing.py   (the grader calls train() on its own model and data)

A small MLP classifier (4 classes, a fifth of the labels noisy) trained with SGD, momentum 0.9.
Rebuilt small from a real pull request: meta-pytorch/torchforge#71, "[ez] zero grad every step".
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES, HIDDEN, CLASSES = 12, 48, 4
STEPS, BATCH, LABEL_NOISE = 40, 32, 0.2


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))

    def forward(self, x):
        return self.net(x)


def make_batches(seed, device="cpu"):
    """STEPS batches of 4-class data around random centres; a fifth of the labels are random."""
    g = torch.Generator().manual_seed(seed)
    centers = 1.5 * torch.randn(CLASSES, FEATURES, generator=g)
    batches = []
    for _ in range(STEPS):
        y = torch.randint(0, CLASSES, (BATCH,), generator=g)
        x = centers[y] + torch.randn(BATCH, FEATURES, generator=g)
        noisy = torch.rand(BATCH, generator=g) < LABEL_NOISE
        y = torch.where(noisy, torch.randint(0, CLASSES, (BATCH,), generator=g), y)
        batches.append((x.to(device), y.to(device)))
    return batches


def train(model, batches, optimizer):
    """One optimizer step per batch; returns the loss of every step."""
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        # backward() adds into .grad; without clearing it first, every step would use the sum of
        # all the gradients so far (and momentum would add them up once more).
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def main():
    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = train(model, make_batches(seed=1), optimizer)
    for step, loss in enumerate(losses):
        print(f"step {step:3d}  loss {loss:.4f}")


if __name__ == "__main__":
    main()
