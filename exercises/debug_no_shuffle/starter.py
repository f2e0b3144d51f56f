# quizapp: exercise=debug_no_shuffle
"""Drill: the loss saws up and down and validation accuracy is poor. Find the cause and fix it.

Run it:    python debug_no_shuffle.py
Grade it:  quizapp grade debug_no_shuffle.py   (the grader calls train() on its own model, data and generator)

A small classifier of four classes whose training set is stored sorted by label. Rebuilt small
from a real report: Deci-AI/super-gradients#416, "Default dataloader params have shuffle=False".
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

FEATURES, HIDDEN, CLASSES = 8, 32, 4
PER_CLASS, VAL_PER_CLASS, NOISE = 48, 100, 1.0
BATCH, EPOCHS = 8, 2


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, CLASSES))

    def forward(self, x):
        return self.net(x)


def make_data(seed, device="cpu"):
    """The training set, stored sorted by label as it came off disk (PER_CLASS samples of class 0,
    then of class 1, ...), as a TensorDataset; and a validation set (x, y) of the same classes."""
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(CLASSES, FEATURES, generator=g)
    y = torch.arange(CLASSES).repeat_interleave(PER_CLASS)
    x = centers[y] + NOISE * torch.randn(len(y), FEATURES, generator=g)
    val_y = torch.arange(CLASSES).repeat_interleave(VAL_PER_CLASS)
    val_x = centers[val_y] + NOISE * torch.randn(len(val_y), FEATURES, generator=g)
    return TensorDataset(x.to(device), y.to(device)), (val_x.to(device), val_y.to(device))


def train(model, dataset, optimizer, generator):
    """EPOCHS epochs of mini-batches of BATCH samples, one optimizer step per batch; returns the loss
    of every step. `generator` (a seeded torch.Generator) is what the shuffling draws from."""
    loader = DataLoader(dataset, batch_size=BATCH)
    losses = []
    for _ in range(EPOCHS):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses


@torch.no_grad()
def accuracy_per_class(model, x, y):
    """The share of each class's validation samples the model labels right."""
    predicted = model(x).argmax(dim=-1)
    return [(predicted[y == c] == c).float().mean().item() for c in range(CLASSES)]


def main():
    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    train_set, (val_x, val_y) = make_data(seed=1)
    losses = train(model, train_set, optimizer, torch.Generator().manual_seed(2))
    for start in range(0, len(losses), 12):
        row = "  ".join(f"{loss:.2f}" for loss in losses[start:start + 12])
        print(f"steps {start:2d}-{min(start + 12, len(losses)) - 1:2d}  loss  {row}")
    accuracy = accuracy_per_class(model, val_x, val_y)
    print("validation accuracy per class: "
          + "  ".join(f"class {c}: {a:.0%}" for c, a in enumerate(accuracy))
          + f"  (all: {sum(accuracy) / len(accuracy):.0%})")


if __name__ == "__main__":
    main()
