# quizapp: exercise=debug_eval_mode
# expect: fail matches-fixed-run
# expect: fail validates-in-eval-mode: "10 of 10 validation forward passes ran with net.3 (Dropout) in train mode"
import torch
import torch.nn.functional as F

# A near miss: only the BatchNorm layers go to eval mode for validation; dropout stays on.


def evaluate(model, batches):
    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm1d)]
    for m in norms:
        m.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in batches:
            total += F.cross_entropy(model(x), y, reduction="sum").item()
            count += len(y)
    for m in norms:
        m.train()
    return total / count


def train_and_validate(model, train_batches, val_batches, optimizer, epochs=5):
    model.train()
    val_losses = []
    for _ in range(epochs):
        for x, y in train_batches:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_losses.append(evaluate(model, val_batches))
    return val_losses
