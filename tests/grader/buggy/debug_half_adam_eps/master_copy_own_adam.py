# quizapp: exercise=debug_half_adam_eps
# expect: fail honest-fix: "the optimizer passed to your function never stepped, yet the weights changed"
# expect: says honest-fix: "the weights end in float16 where the fixed script's are float32"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A near miss: float32 master copies with an Adam of its own over them, the float16 weights
# overwritten from the copies after each step. Every step runs, but on another optimizer than the
# one passed in, and the weights the model computes with are float16 still.


def train(model, batches, optimizer, log=None):
    model.half()
    params = list(model.parameters())
    masters = [p.detach().float().clone().requires_grad_(True) for p in params]
    adam = torch.optim.Adam(masters, lr=optimizer.param_groups[0]["lr"])
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x.half()).float(), y)
        for p in params:
            p.grad = None
        loss.backward()
        for m, p in zip(masters, params):
            m.grad = p.grad.float()
        adam.step()
        with torch.no_grad():
            for m, p in zip(masters, params):
                p.copy_(m.half())
        losses.append(loss.item())
    return losses
