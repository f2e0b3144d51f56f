# quizapp: exercise=debug_sqrt_zero
# expect: fail honest-fix: "4 optimizer steps ran where the fixed script takes 40"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: a step whose gradients hold NaN is skipped.

MARGIN = 1.0


def contrastive_loss(e1, e2, same):
    diff = e1 - e2
    squared = diff.pow(2).sum(1)
    distance = squared.sqrt()
    losses = same * squared + (1 - same) * F.relu(MARGIN - distance).pow(2)
    return 0.5 * losses.mean()


def train(model, batches, optimizer):
    losses = []
    for x1, x2, same in batches:
        loss = contrastive_loss(model(x1), model(x2), same)
        optimizer.zero_grad()
        loss.backward()
        if not all(torch.isfinite(p.grad).all() for p in model.parameters()):
            losses.append(loss.item())
            continue
        optimizer.step()
        losses.append(loss.item())
    return losses
