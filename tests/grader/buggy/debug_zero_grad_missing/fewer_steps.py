# quizapp: exercise=debug_zero_grad_missing
# expect: fail fresh-gradient-each-step
# expect: fail honest-fix: "5 forward passes where the fixed script runs 40"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: train on the first 5 batches only, before the loss climbs.


def train(model, batches, optimizer):
    losses = []
    optimizer.zero_grad()
    for x, y in batches[:5]:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
