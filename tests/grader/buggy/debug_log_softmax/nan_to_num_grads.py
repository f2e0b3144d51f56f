# quizapp: exercise=debug_log_softmax
# expect: fail honest-fix: "nan_to_num was called"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F
# A cosmetic fix: NaN gradients replaced by zeros before the step; the loss itself is still inf.


def cross_entropy(logits, targets):
    probs = torch.softmax(logits, dim=-1)
    return -torch.log(probs).gather(1, targets[:, None]).mean()


def train(model, batches, optimizer):
    losses = []
    for x, y in batches:
        loss = cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        for p in model.parameters():
            if p.grad is not None:
                p.grad.nan_to_num_(nan=0.0, posinf=0.0, neginf=0.0)
        optimizer.step()
        losses.append(min(loss.item(), 1e4))
    return losses
