# quizapp: exercise=debug_eval_mode
# expect: fail validates-in-eval-mode
# expect: fail honest-fix: "the learning rate at step 0 was 0.005 where the fixed script uses 0.05"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: a learning rate ten times lower; validation still runs in train mode.


def evaluate(model, batches):
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in batches:
            total += F.cross_entropy(model(x), y, reduction="sum").item()
            count += len(y)
    return total / count


def train_and_validate(model, train_batches, val_batches, optimizer, epochs=5):
    for group in optimizer.param_groups:
        group["lr"] *= 0.1
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
