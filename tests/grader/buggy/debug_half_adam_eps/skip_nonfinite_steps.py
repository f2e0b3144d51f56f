# quizapp: exercise=debug_half_adam_eps
# expect: fail loss-finite
# expect: fail honest-fix: "1 optimizer step ran where the fixed script takes 40"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: a step whose loss is not finite is skipped; the first step already broke the weights.


def train(model, batches, optimizer, log=None):
    model.half()
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x.half()).float(), y)
        optimizer.zero_grad()
        if torch.isfinite(loss):
            loss.backward()
            optimizer.step()
        losses.append(loss.item())
    return losses
