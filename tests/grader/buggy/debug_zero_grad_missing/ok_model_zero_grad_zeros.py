# quizapp: exercise=debug_zero_grad_missing
# expect: pass
import torch.nn.functional as F

# A right fix written another way: model.zero_grad(set_to_none=False) fills .grad with zeros.


def train(model, batches, optimizer):
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        model.zero_grad(set_to_none=False)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
