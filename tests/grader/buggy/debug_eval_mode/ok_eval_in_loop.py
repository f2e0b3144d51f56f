# quizapp: exercise=debug_eval_mode
# expect: pass
import torch
import torch.nn.functional as F

# A right fix written another way: evaluate() left as it was; the loop puts the model in eval mode
# around the validation and back in train mode after it.


def evaluate(model, batches):
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
        model.eval()
        val_losses.append(evaluate(model, val_batches))
        model.train()
    return val_losses
