# quizapp: exercise=debug_accum_not_divided
"""The fixed script: each micro-batch's loss is divided by the number of micro-batches per step.

Run it:    python debug_accum_not_divided.py
Grade it:  quizapp grade debug_accum_not_divided.py   (the grader calls train() on its own model and data)

A small regression MLP trained with SGD (momentum 0.9). Each optimizer step should see 128
samples; to save memory they arrive as 8 micro-batches of 16 whose gradients are accumulated.
With accum_steps=1 on batches of 128 it trains; with accum_steps=8 on the same samples the loss
explodes. Rebuilt small from a real report: karpathy/nanoGPT#168, "Should `loss` be divided by
`gradient_accumulation_steps`?".
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES, HIDDEN = 8, 32
STEPS, MICRO, ACCUM = 20, 16, 8  # 20 optimizer steps of 8 micro-batches x 16 samples = 128 samples each


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def make_batches(seed, device="cpu", size=MICRO):
    """STEPS x 128 samples of a noisy 1-d regression, cut into batches of `size` samples."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(FEATURES, generator=g) / FEATURES ** 0.5
    x = torch.randn(STEPS * MICRO * ACCUM, FEATURES, generator=g)
    y = 2 * torch.tanh(x @ w) + 0.1 * torch.randn(len(x), generator=g)
    return [(x[i:i + size].to(device), y[i:i + size].to(device)) for i in range(0, len(x), size)]


def train(model, batches, optimizer, accum_steps):
    """One optimizer step per `accum_steps` micro-batches; returns each step's loss (the mean of
    its micro-batches' losses)."""
    losses, step_loss = [], 0.0
    optimizer.zero_grad()
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y)
        # Each micro-batch's loss is a mean over its 16 samples; .grad sums the accum_steps
        # backward passes, so dividing by accum_steps makes the sum the mean over all 128 samples,
        # the gradient one batch of 128 would give. Without it the step is accum_steps times too big.
        (loss / accum_steps).backward()
        step_loss += loss.item() / accum_steps
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
            losses.append(step_loss)
            step_loss = 0.0
    return losses


def main():
    runs = []
    for accum_steps, size in ((1, MICRO * ACCUM), (ACCUM, MICRO)):
        torch.manual_seed(0)
        model = Regressor()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        runs.append(train(model, make_batches(seed=1, size=size), optimizer, accum_steps))
    print("          accum_steps=1    accum_steps=8")
    print("          (1 batch x 128)  (8 micro-batches x 16)")
    for step, (one, eight) in enumerate(zip(*runs)):
        print(f"step {step:3d}  loss {one:<10.4g} loss {eight:.4g}")


if __name__ == "__main__":
    main()
