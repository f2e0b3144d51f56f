# quizapp: exercise=debug_zero_grad_missing
import torch
import torch.nn.functional as F

# A cosmetic fix: clipping caps the summed gradient at norm 1; it still sums.


def train(model, batches, optimizer):
    losses = []
    optimizer.zero_grad()
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses
