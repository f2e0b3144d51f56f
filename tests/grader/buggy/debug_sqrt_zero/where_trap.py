# quizapp: exercise=debug_sqrt_zero
# expect: fail matches-fixed-run
# expect: fail gradients-finite: "the loss is nan at step 1"
import torch
import torch.nn.functional as F

# A near miss: torch.where picks 0 in the forward, but the sqrt branch still backpropagates 0 * inf.

MARGIN = 1.0


def contrastive_loss(e1, e2, same):
    diff = e1 - e2
    squared = diff.pow(2).sum(1)
    distance = torch.where(squared > 0, squared.sqrt(), torch.zeros_like(squared))
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
