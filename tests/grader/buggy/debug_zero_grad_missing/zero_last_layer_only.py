# quizapp: exercise=debug_zero_grad_missing
# expect: fail matches-fixed-run
# expect: fail fresh-gradient-each-step: "the gradients add up across steps" "happens at 39 of 40 steps"
import torch.nn.functional as F

# A near miss: only the output layer's gradients are cleared.


def train(model, batches, optimizer):
    losses = []
    optimizer.zero_grad()
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        for p in list(model.parameters())[-2:]:
            p.grad = None
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
