# quizapp: exercise=debug_log_softmax
# expect: fail honest-fix: "the learning rate was 0 at all 40 steps"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F
# A cosmetic fix: with the learning rate at 0 nothing moves, so nothing blows up.


def cross_entropy(logits, targets):
    probs = torch.softmax(logits, dim=-1)
    return -torch.log(probs).gather(1, targets[:, None]).mean()


def train(model, batches, optimizer):
    for group in optimizer.param_groups:
        group["lr"] = 0.0
    losses = []
    for x, y in batches:
        loss = cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
