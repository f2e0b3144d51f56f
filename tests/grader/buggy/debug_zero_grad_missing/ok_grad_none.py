# quizapp: exercise=debug_zero_grad_missing
# expect: pass
import torch.nn.functional as F

# A right fix written another way: every parameter's .grad set to None before backward.


def train(model, batches, optimizer):
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        for p in model.parameters():
            p.grad = None
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
