# quizapp: exercise=debug_zero_grad_missing
# expect: pass
import torch.nn.functional as F

# A right fix written another way: the gradients cleared right after each step.


def train(model, batches, optimizer):
    losses = []
    optimizer.zero_grad()
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return losses
