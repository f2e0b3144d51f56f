# quizapp: exercise=debug_total_loss_graph
# expect: fail matches-fixed-run: "39 of the training forward passes ran in eval mode"
import torch
import torch.nn.functional as F

# A near miss: no graph and a float total, but dropout is left off: model.train() is gone.


def train(model, batches, optimizer, val_batch, log=None):
    losses = []
    val_total = 0.0
    x_val, y_val = val_batch
    model.train()
    for step, (x, y) in enumerate(batches):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            val_total += F.cross_entropy(model(x_val), y_val).item()
        if log is not None:
            log(step, losses[-1], val_total / (step + 1))
    return losses
