# quizapp: exercise=debug_half_adam_eps
"""The fixed script: the weights stay float32 and only the forward runs in float16, under autocast.

Run it:    python debug_half_adam_eps.py
Grade it:  quizapp grade debug_half_adam_eps.py   (the grader calls train() on its own model, data and Adam)

A small classifier trained with float16 matmuls and Adam (lr 3e-3, the default eps). Rebuilt small from
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
    """Train in float16 mixed precision, one optimizer step per batch; returns the loss of every step.

    `log`, if given, receives (step, loss, largest |gradient|, largest |weight| after the step).
    """
    device = next(model.parameters()).device
    losses = []
    for step, (x, y) in enumerate(batches):
        # model.half() made the weights, their gradients and Adam's state float16. Adam divides by
        # sqrt(exp_avg_sq) + eps: for a gradient below about 5.5e-3, (1 - beta2) * grad**2 rounds to
        # 0 in float16, so exp_avg_sq is 0, and eps = 1e-8 is 0 in float16 too, so the
        # first step divides by zero and writes inf and NaN into the weights. Under autocast the
        # weights and Adam's state stay float32 and each matmul uses a float16 copy of the weight.
        with torch.autocast(device_type=device.type, dtype=torch.float16):
            logits = model(x)
            loss = F.cross_entropy(logits, y)
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
