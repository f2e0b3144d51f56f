# quizapp: exercise=debug_eval_mode
# expect: fail validates-in-eval-mode
# expect: fail honest-fix: "40 forward passes where the fixed script runs 50"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: no validation at all, so nothing noisy is printed; the training losses come back instead.


def evaluate(model, batches):
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in batches:
            total += F.cross_entropy(model(x), y, reduction="sum").item()
            count += len(y)
    return total / count


def train_and_validate(model, train_batches, val_batches, optimizer, epochs=5):
    model.train()
    losses = []
    for _ in range(epochs):
        total = 0.0
        for x, y in train_batches:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        losses.append(total / len(train_batches))
    return losses
