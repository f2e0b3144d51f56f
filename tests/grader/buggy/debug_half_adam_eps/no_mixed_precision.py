# quizapp: exercise=debug_half_adam_eps
# expect: fail honest-fix: "40 of 40 forward passes returned float32 where the fixed script's forward passes return float16"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: .half() removed and nothing in its place; the model trains in float32.


def train(model, batches, optimizer, log=None):
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
