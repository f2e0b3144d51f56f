# quizapp: exercise=debug_eval_mode
"""The fixed script: validation runs in eval mode, and training goes back to train mode after it.

Run it:    python debug_eval_mode.py
Grade it:  quizapp grade debug_eval_mode.py   (the grader calls train_and_validate() on its own model and data)

A small classifier with BatchNorm and dropout, validated after every epoch. Validating the same
model twice gives two different losses, and validating moves BatchNorm's running statistics.
Rebuilt small from a real report: princeton-vl/pytorch_stacked_hourglass#44, "`model.train()`
usage".
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES, HIDDEN, CLASSES = 12, 64, 4
EPOCHS, TRAIN_BATCHES, TRAIN_BATCH = 5, 8, 32
VAL_BATCHES, VAL_BATCH = 2, 100
DROPOUT = 0.5


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(FEATURES, HIDDEN), nn.BatchNorm1d(HIDDEN), nn.ReLU(), nn.Dropout(DROPOUT),
            nn.Linear(HIDDEN, CLASSES),
        )

    def forward(self, x):
        return self.net(x)


def make_data(seed, device="cpu"):
    """(train batches, validation batches) of 4-class data around random centres, the inputs on
    an offset scale, as raw features often are."""
    g = torch.Generator().manual_seed(seed)
    centers = 2.0 * torch.randn(CLASSES, FEATURES, generator=g)

    def batch(n):
        y = torch.randint(0, CLASSES, (n,), generator=g)
        x = 3.0 + centers[y] + 2.5 * torch.randn(n, FEATURES, generator=g)
        return x.to(device), y.to(device)

    return [batch(TRAIN_BATCH) for _ in range(TRAIN_BATCHES)], [batch(VAL_BATCH) for _ in range(VAL_BATCHES)]


def evaluate(model, batches):
    """Mean cross-entropy over the validation batches."""
    # eval(): dropout passes everything through and BatchNorm normalises with its running
    # statistics, which it leaves alone; in train mode every validation batch would draw a new
    # dropout mask and pull the running statistics towards the validation data.
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in batches:
            total += F.cross_entropy(model(x), y, reduction="sum").item()
            count += len(y)
    model.train()  # back to train mode, or every later epoch trains without dropout and batch statistics
    return total / count


def train_and_validate(model, train_batches, val_batches, optimizer, epochs=EPOCHS):
    """`epochs` passes over the training batches, one optimizer step per batch, validating after
    each pass; returns the validation loss of every epoch."""
    model.train()
    val_losses = []
    for _ in range(epochs):
        for x, y in train_batches:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_losses.append(evaluate(model, val_batches))
    return val_losses


def main():
    torch.manual_seed(0)
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    train_batches, val_batches = make_data(seed=1)
    val_losses = train_and_validate(model, train_batches, val_batches, optimizer)
    for epoch, loss in enumerate(val_losses):
        print(f"epoch {epoch}  validation loss {loss:.4f}")
    bn = model.net[1]
    before = bn.running_mean.clone()
    # Validated the way training validates it, wherever the mode is set: three epochs without a
    # training batch run the validation alone, three times, on the trained model.
    again = train_and_validate(model, [], val_batches, optimizer, epochs=3)
    print("the same model validated three more times:", "  ".join(f"{v:.4f}" for v in again))
    print(f"BatchNorm running_mean moved by up to {(bn.running_mean - before).abs().max().item():.4f} "
          "while validating")


if __name__ == "__main__":
    main()
