# quizapp: exercise=debug_zero_grad_missing
# expect: fail matches-fixed-run: "before 39 of the 40 steps the optimizer's state (its momentum buffers) was empty"
import torch.nn.functional as F

# A near miss: the gradients are cleared, and the optimizer's state with them, which throws
# the momentum away at every step.


def train(model, batches, optimizer):
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        optimizer.state.clear()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
