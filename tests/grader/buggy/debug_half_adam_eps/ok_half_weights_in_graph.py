# quizapp: exercise=debug_half_adam_eps
# expect: pass
import torch
import torch.nn.functional as F

# A right fix written another way: the float32 weights are the master copy; the forward runs on
# float16 casts of them made inside the graph, so the gradients flow back to float32.


def train(model, batches, optimizer, log=None):
    losses = []
    for x, y in batches:
        half = {name: p.half() for name, p in model.named_parameters()}
        logits = torch.func.functional_call(model, half, (x.half(),))
        loss = F.cross_entropy(logits.float(), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
