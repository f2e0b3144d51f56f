# quizapp: exercise=debug_log_softmax
# expect: fail loss-finite
# expect: fail honest-fix: "nan_to_num was called 40 times"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F
# A cosmetic fix: the inf/NaN loss is replaced by a number; the gradients are still NaN.


def cross_entropy(logits, targets):
    probs = torch.softmax(logits, dim=-1)
    return torch.nan_to_num(-torch.log(probs).gather(1, targets[:, None]).mean(), nan=0.0, posinf=0.0)


def train(model, batches, optimizer):
    losses = []
    for x, y in batches:
        loss = cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
