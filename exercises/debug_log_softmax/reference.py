# quizapp: exercise=debug_log_softmax
"""The fixed script: the loss is the log-softmax of the logits, never the log of a softmax.

Run it:    python debug_log_softmax.py
Grade it:  quizapp grade debug_log_softmax.py   (the grader calls train() on its own model and data)

A cosine classifier (unit-length features and class vectors, logits scaled by 100, as CLIP scales
its logits) trained with a hand-written cross-entropy. Rebuilt small from a real report:
skorch-dev/skorch#481, "torch.log(y_pred) in NeuralNetClassifier.get_loss may cause NaN".
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES, HIDDEN, CLASSES = 10, 32, 5
LOGIT_SCALE = 100.0
STEPS, BATCH, LABEL_NOISE = 40, 32, 0.1


class CosineClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, HIDDEN))
        self.classes = nn.Parameter(torch.randn(CLASSES, HIDDEN))

    def forward(self, x):
        features = F.normalize(self.body(x), dim=-1)
        return LOGIT_SCALE * features @ F.normalize(self.classes, dim=-1).T


def make_batches(seed, device="cpu"):
    """STEPS batches of noisy 5-class data (a tenth of the labels are random)."""
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(CLASSES, FEATURES, generator=g)
    batches = []
    for _ in range(STEPS):
        y = torch.randint(0, CLASSES, (BATCH,), generator=g)
        x = centers[y] + 0.5 * torch.randn(BATCH, FEATURES, generator=g)
        noisy = torch.rand(BATCH, generator=g) < LABEL_NOISE
        y = torch.where(noisy, torch.randint(0, CLASSES, (BATCH,), generator=g), y)
        batches.append((x.to(device), y.to(device)))
    return batches


def cross_entropy(logits, targets):
    """Mean negative log-likelihood of the targets."""
    # log_softmax computes x - logsumexp(x): no probability is formed, so none can round to 0 and
    # no log(0) = -inf can appear, however far apart the logits are.
    return F.cross_entropy(logits, targets)


def train(model, batches, optimizer):
    """One optimizer step per batch; returns the loss of every step."""
    losses = []
    for x, y in batches:
        loss = cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def main():
    torch.manual_seed(0)
    model = CosineClassifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9)
    losses = train(model, make_batches(seed=1), optimizer)
    for step, loss in enumerate(losses):
        print(f"step {step:3d}  loss {loss:.4f}")


if __name__ == "__main__":
    main()
