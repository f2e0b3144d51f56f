# quizapp: exercise=debug_sqrt_zero
# expect: fail gradients-finite
# expect: fail honest-fix: "the learning rate was 0 at all 40 steps"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: with the learning rate at 0 nothing moves, so no NaN reaches the weights.

MARGIN = 1.0


def contrastive_loss(e1, e2, same):
    diff = e1 - e2
    squared = diff.pow(2).sum(1)
    distance = squared.sqrt()
    losses = same * squared + (1 - same) * F.relu(MARGIN - distance).pow(2)
    return 0.5 * losses.mean()


def train(model, batches, optimizer):
    for group in optimizer.param_groups:
        group["lr"] = 0.0
    losses = []
    for x1, x2, same in batches:
        loss = contrastive_loss(model(x1), model(x2), same)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
