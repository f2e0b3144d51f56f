# quizapp: exercise=debug_sqrt_zero
"""Drill: the loss is NaN from step 2 on, and every weight ends NaN. Find the cause and fix it.

Run it:    python debug_sqrt_zero.py
Grade it:  quizapp grade debug_sqrt_zero.py   (the grader calls train() on its own model and data)

A siamese embedding net trained with a contrastive loss: similar pairs are pulled together by their
squared distance, dissimilar pairs pushed at least MARGIN apart. Pairs are drawn at random from the
batch, so now and then a sample is paired with itself. Rebuilt small from a real report:
adambielski/siamese-triplet#18, "Siamese loss problem".
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES, HIDDEN, EMBED, CLASSES = 8, 32, 4, 4
STEPS, POOL, PAIRS = 40, 16, 32
MARGIN = 1.0


class EmbeddingNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, EMBED))

    def forward(self, x):
        return self.net(x)


def make_batches(seed, device="cpu"):
    """STEPS batches of PAIRS pairs (x1, x2, same), each drawn from a pool of POOL samples."""
    g = torch.Generator().manual_seed(seed)
    centers = 2 * torch.randn(CLASSES, FEATURES, generator=g)
    batches = []
    for _ in range(STEPS):
        labels = torch.randint(0, CLASSES, (POOL,), generator=g)
        pool = centers[labels] + torch.randn(POOL, FEATURES, generator=g)
        i = torch.randint(0, POOL, (PAIRS,), generator=g)
        j = torch.randint(0, POOL, (PAIRS,), generator=g)
        same = (labels[i] == labels[j]).float()
        batches.append((pool[i].to(device), pool[j].to(device), same.to(device)))
    return batches


def contrastive_loss(e1, e2, same):
    """Similar pairs: squared distance. Dissimilar pairs: squared shortfall below MARGIN."""
    diff = e1 - e2
    squared = diff.pow(2).sum(1)
    distance = squared.sqrt()
    losses = same * squared + (1 - same) * F.relu(MARGIN - distance).pow(2)
    return 0.5 * losses.mean()


def train(model, batches, optimizer):
    """One optimizer step per batch of pairs; returns the loss of every step."""
    losses = []
    for x1, x2, same in batches:
        loss = contrastive_loss(model(x1), model(x2), same)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def main():
    torch.manual_seed(0)
    model = EmbeddingNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = train(model, make_batches(seed=1), optimizer)
    for step, loss in enumerate(losses):
        print(f"step {step:3d}  loss {loss:.4f}")
    bad = [name for name, p in model.named_parameters() if not torch.isfinite(p).all()]
    print("weights with NaN after training:", ", ".join(bad) or "none")


if __name__ == "__main__":
    main()
