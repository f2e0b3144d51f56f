# quizapp: exercise=debug_zero_grad_missing
# expect: fail fresh-gradient-each-step
# expect: fail honest-fix: "14 optimizer steps ran where the fixed script takes 40"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: a step whose loss is above twice the first one is skipped.


def train(model, batches, optimizer):
    first = None
    losses = []
    optimizer.zero_grad()
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        first = loss.item() if first is None else first
        if loss.item() < 2 * first:
            optimizer.step()
        losses.append(loss.item())
    return losses
