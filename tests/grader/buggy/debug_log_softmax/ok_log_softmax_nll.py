# quizapp: exercise=debug_log_softmax
# expect: pass
import torch
import torch.nn.functional as F
# A right fix written another way: log_softmax, then the negative log-likelihood.


def cross_entropy(logits, targets):
    return F.nll_loss(F.log_softmax(logits, dim=-1), targets)


def train(model, batches, optimizer):
    losses = []
    for x, y in batches:
        loss = cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
