# quizapp: exercise=debug_sqrt_zero
# expect: fail matches-fixed-run: "your loss is 0.05152935" "dropping the pairs at distance 0"
import torch.nn.functional as F

# A near miss: the pairs at distance 0 are dropped, so the mean runs over fewer pairs.

MARGIN = 1.0


def contrastive_loss(e1, e2, same):
    diff = e1 - e2
    squared = diff.pow(2).sum(1)
    keep = squared > 0
    squared, same = squared[keep], same[keep]
    distance = squared.sqrt()
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
