# quizapp: exercise=debug_zero_grad_missing
# expect: fail matches-fixed-run
# expect: fail fresh-gradient-each-step: "at step 0 the optimizer stepped with a gradient of norm 0 where the gradient of that step's batch has norm"
# expect: says fresh-gradient-each-step: "cleared after backward and before the step used it (40 of 40 steps)"
import torch.nn.functional as F

# A near miss: zero_grad moved into the loop, but between backward and step, so every
# step uses a zero gradient.


def train(model, batches, optimizer):
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        losses.append(loss.item())
    return losses
