# quizapp: exercise=debug_sqrt_zero
# expect: pass
import torch
import torch.nn.functional as F

# A right fix written another way: the sqrt only ever sees a positive value; pairs at 0 get 0.

MARGIN = 1.0


def contrastive_loss(e1, e2, same):
    diff = e1 - e2
    squared = diff.pow(2).sum(1)
    positive = squared > 0
    safe = torch.where(positive, squared, torch.ones_like(squared))
    distance = torch.where(positive, safe.sqrt(), torch.zeros_like(squared))
    losses = same * squared + (1 - same) * F.relu(MARGIN - distance).pow(2)
    return 0.5 * losses.mean()


def train(model, batches, optimizer):
    losses = []
    for x1, x2, same in batches:
        loss = contrastive_loss(model(x1), model(x2), same)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
