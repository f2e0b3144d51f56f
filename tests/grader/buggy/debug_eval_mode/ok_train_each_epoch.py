# quizapp: exercise=debug_eval_mode
# expect: pass
import torch
import torch.nn.functional as F

# A right fix written another way: eval() in evaluate, train() at the top of every epoch.


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
        model.train()
        for x, y in train_batches:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_losses.append(evaluate(model, val_batches))
    return val_losses
