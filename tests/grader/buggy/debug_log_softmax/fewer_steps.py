# quizapp: exercise=debug_log_softmax
# expect: fail honest-fix: "1 forward pass where the fixed script runs 40"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F
# A cosmetic fix: stop after the first step, before the NaN shows.


def cross_entropy(logits, targets):
    probs = torch.softmax(logits, dim=-1)
    return -torch.log(probs).gather(1, targets[:, None]).mean()


def train(model, batches, optimizer):
    losses = []
    for x, y in batches[:1]:
        loss = cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
