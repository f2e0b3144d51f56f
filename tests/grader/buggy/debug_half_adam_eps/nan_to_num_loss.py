# quizapp: exercise=debug_half_adam_eps
# expect: fail loss-finite
# expect: fail honest-fix: "nan_to_num was called 40 times"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: the NaN loss is replaced by a number; the weights are still inf and NaN.


def train(model, batches, optimizer, log=None):
    model.half()
    losses = []
    for x, y in batches:
        loss = torch.nan_to_num(F.cross_entropy(model(x.half()).float(), y), nan=0.0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
