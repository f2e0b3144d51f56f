# quizapp: exercise=debug_half_adam_eps
# expect: fail loss-finite
# expect: fail honest-fix: "1 forward pass where the fixed script runs 40"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: only the first batch is run, before any weight turns inf.


def train(model, batches, optimizer, log=None):
    model.half()
    losses = []
    for x, y in batches[:1]:
        loss = F.cross_entropy(model(x.half()).float(), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
