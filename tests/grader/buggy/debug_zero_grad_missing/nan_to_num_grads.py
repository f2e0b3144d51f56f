# quizapp: exercise=debug_zero_grad_missing
# expect: fail fresh-gradient-each-step
# expect: fail honest-fix: "nan_to_num was called 160 times"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: the gradients passed through nan_to_num before each step; they still add up.


def train(model, batches, optimizer):
    losses = []
    optimizer.zero_grad()
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        for p in model.parameters():
            p.grad.nan_to_num_(nan=0.0, posinf=0.0, neginf=0.0)
        optimizer.step()
        losses.append(loss.item())
    return losses
