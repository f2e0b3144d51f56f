# quizapp: exercise=debug_sqrt_zero
# expect: fail matches-fixed-run: "your loss is 0.04830229 where the exact one is" "an epsilon inside the sqrt"
import torch.nn.functional as F

# A near miss: an epsilon of 1e-4 inside the sqrt makes every distance longer.

MARGIN = 1.0


def contrastive_loss(e1, e2, same):
    diff = e1 - e2
    squared = diff.pow(2).sum(1)
    distance = (squared + 1e-4).sqrt()
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
