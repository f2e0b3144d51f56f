# quizapp: exercise=debug_half_adam_eps
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
