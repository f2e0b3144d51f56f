# quizapp: exercise=debug_half_adam_eps
# expect: fail matches-fixed-run: "net.0.weight, net.0.bias, net.2.weight, net.2.bias are float16"
# expect: says matches-fixed-run: "can only move in steps of 2.4e-04" "A float32 copy of the weights has to live"
import torch.nn.functional as F

# A near miss: the model stays float16; each step casts weights and gradients to float32, steps, and
# rounds the weights back to float16, so no float32 copy lives from one step to the next.


def train(model, batches, optimizer, log=None):
    model.half()
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x.half()).float(), y)
        optimizer.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data = p.data.float()
            p.grad = p.grad.float()
        optimizer.step()
        for p in model.parameters():
            p.data = p.data.half()
            p.grad = None
        losses.append(loss.item())
    return losses
