# quizapp: exercise=debug_total_loss_graph
# expect: pass
import torch.nn.functional as F

# A right fix written another way: the total stays a tensor, but a detached one, with no graph.


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
        val_loss = F.cross_entropy(model(x_val), y_val)
        val_total = val_total + val_loss.detach()
        model.train()
        if log is not None:
            log(step, losses[-1], val_total / (step + 1))
    return losses
