# quizapp: exercise=debug_half_adam_eps
# expect: fail honest-fix: "nan_to_num was called 160 times"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: the weights are cleaned with nan_to_num after every step.


def train(model, batches, optimizer, log=None):
    model.half()
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x.half()).float(), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            for p in model.parameters():
                p.nan_to_num_(nan=0.0, posinf=1.0, neginf=-1.0)
        losses.append(loss.item())
    return losses
