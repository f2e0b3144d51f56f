# quizapp: exercise=debug_eval_mode
# expect: fail matches-fixed-run
# expect: fail validates-in-eval-mode: "net.1 (BatchNorm1d), net.3 (Dropout) in train mode" "moved by up to 0.5044"
import torch
import torch.nn.functional as F

# A near miss: torch.inference_mode() instead of eval(): no autograd, but dropout and BatchNorm still in train mode.


def evaluate(model, batches):
    total, count = 0.0, 0
    with torch.inference_mode():
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
