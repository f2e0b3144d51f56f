# quizapp: exercise=debug_log_softmax
# expect: fail loss-finite
# expect: fail honest-fix: "2 optimizer steps ran where the fixed script takes 40"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F
# A cosmetic fix: a step whose loss is not finite is skipped, and its loss not reported.


def cross_entropy(logits, targets):
    probs = torch.softmax(logits, dim=-1)
    return -torch.log(probs).gather(1, targets[:, None]).mean()


def train(model, batches, optimizer):
    losses = []
    for x, y in batches:
        loss = cross_entropy(model(x), y)
        if not torch.isfinite(loss):
            continue
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
