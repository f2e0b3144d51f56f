# quizapp: exercise=debug_log_softmax
# expect: fail loss-finite
# expect: fail honest-fix: "the learning rate at step 0 was 0.003 where the fixed script uses 0.03"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F
# A cosmetic fix: a learning rate ten times lower delays the moment a logit gap reaches 104.


def cross_entropy(logits, targets):
    probs = torch.softmax(logits, dim=-1)
    return -torch.log(probs).gather(1, targets[:, None]).mean()


def train(model, batches, optimizer):
    for group in optimizer.param_groups:
        group["lr"] *= 0.1
    losses = []
    for x, y in batches:
        loss = cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
