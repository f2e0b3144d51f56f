# quizapp: exercise=debug_eval_mode
# expect: fail validates-in-eval-mode
# expect: fail honest-fix: "dropout's rate was 0 in 40 training forward passes where the fixed script trains with 0.5"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: dropout switched off (p = 0) so validation stops jumping; BatchNorm still validates in train mode.


def evaluate(model, batches):
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in batches:
            total += F.cross_entropy(model(x), y, reduction="sum").item()
            count += len(y)
    return total / count


def train_and_validate(model, train_batches, val_batches, optimizer, epochs=5):
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
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
