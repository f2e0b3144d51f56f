# quizapp: exercise=debug_sqrt_zero
# expect: fail honest-fix: "nan_to_num was called 160 times"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: NaN gradients replaced by zeros before the step.

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
        for p in model.parameters():
            p.grad.nan_to_num_(nan=0.0)
        optimizer.step()
        losses.append(loss.item())
    return losses
