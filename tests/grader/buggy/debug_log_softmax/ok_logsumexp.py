# quizapp: exercise=debug_log_softmax
# expect: pass
import torch
import torch.nn.functional as F
# A right fix written another way: logsumexp(x) - x[target], the log-softmax by hand.


def cross_entropy(logits, targets):
    return (torch.logsumexp(logits, dim=-1) - logits.gather(1, targets[:, None]).squeeze(1)).mean()


def train(model, batches, optimizer):
    losses = []
    for x, y in batches:
        loss = cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
