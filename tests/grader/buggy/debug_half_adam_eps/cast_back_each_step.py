# quizapp: exercise=debug_half_adam_eps
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
