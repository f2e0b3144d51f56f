# quizapp: exercise=debug_eval_mode
# expect: fail validates-in-eval-mode
# expect: fail honest-fix: "the learning rate was 0 at all 40 steps"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: with the learning rate at 0 the model never changes, so validation has nothing to vary.


def evaluate(model, batches):
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in batches:
            total += F.cross_entropy(model(x), y, reduction="sum").item()
            count += len(y)
    return total / count


def train_and_validate(model, train_batches, val_batches, optimizer, epochs=5):
    for group in optimizer.param_groups:
        group["lr"] = 0.0
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
