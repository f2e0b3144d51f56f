# quizapp: exercise=debug_half_adam_eps
# expect: fail loss-finite
# expect: fail honest-fix: "the learning rate at step 0 was 0.0003 where the fixed script uses 0.003"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: the learning rate lowered tenfold; eps still rounds to 0 in float16.


def train(model, batches, optimizer, log=None):
    model.half()
    for group in optimizer.param_groups:
        group["lr"] = group["lr"] / 10
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x.half()).float(), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
