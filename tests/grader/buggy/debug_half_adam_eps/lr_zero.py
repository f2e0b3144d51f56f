# quizapp: exercise=debug_half_adam_eps
# expect: fail loss-finite
# expect: fail honest-fix: "the learning rate was 0 at all 40 steps"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: the learning rate set to zero (Adam's 0 * inf is still NaN).


def train(model, batches, optimizer, log=None):
    model.half()
    for group in optimizer.param_groups:
        group["lr"] = 0.0
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x.half()).float(), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
