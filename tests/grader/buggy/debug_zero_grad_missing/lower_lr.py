# quizapp: exercise=debug_zero_grad_missing
# expect: fail fresh-gradient-each-step
# expect: fail honest-fix: "the learning rate at step 0 was 0.005 where the fixed script uses 0.05"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: a learning rate ten times lower makes the growing sum climb more slowly.


def train(model, batches, optimizer):
    for group in optimizer.param_groups:
        group["lr"] *= 0.1
    losses = []
    optimizer.zero_grad()
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
