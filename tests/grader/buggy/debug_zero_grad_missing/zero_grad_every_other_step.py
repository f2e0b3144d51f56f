# quizapp: exercise=debug_zero_grad_missing
# expect: fail matches-fixed-run
# expect: fail fresh-gradient-each-step: "the gradients add up across steps" "happens at 20 of 40 steps"
import torch.nn.functional as F

# A near miss: the gradients cleared on every second step only.


def train(model, batches, optimizer):
    step = 0
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        if step % 2 == 0:
            optimizer.zero_grad()
        step += 1
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
