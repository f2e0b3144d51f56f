# quizapp: exercise=debug_eval_mode
# expect: fail matches-fixed-run: "32 of 40 training forward passes (the first at pass 8) ran with dropout or BatchNorm in eval mode"
# expect: says matches-fixed-run: "call model.train() again"
import torch
import torch.nn.functional as F

# A near miss: model.eval() before validating, but never model.train() after it.


def evaluate(model, batches):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in batches:
            total += F.cross_entropy(model(x), y, reduction="sum").item()
            count += len(y)
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
