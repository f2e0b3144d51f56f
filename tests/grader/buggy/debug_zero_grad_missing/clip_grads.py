# quizapp: exercise=debug_zero_grad_missing
# expect: fail fresh-gradient-each-step
# expect: fail honest-fix: "clip_grad_norm_ ran 40 times where the fixed script never clips"
# expect: fail matches-fixed-run: "this follows from the check"
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
