# quizapp: exercise=debug_zero_grad_missing
# expect: fail fresh-gradient-each-step
# expect: fail honest-fix: "the optimizer's momentum at step 0 was 0 where the fixed script uses 0.9"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: momentum off, since the steps look like runaway momentum; .grad still sums.


def train(model, batches, optimizer):
    for group in optimizer.param_groups:
        group["momentum"] = 0.0
    losses = []
    optimizer.zero_grad()
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
