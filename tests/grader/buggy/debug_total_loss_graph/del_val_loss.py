# quizapp: exercise=debug_total_loss_graph
# expect: fail matches-fixed-run
# expect: fail memory-stays-flat: "the symptom is still there: memory grows every step"
import torch.nn.functional as F

# A near miss: `del val_loss` drops one name for the graph; val_total still holds all of them.


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
        val_total += val_loss
        del val_loss
        model.train()
        if log is not None:
            log(step, losses[-1], val_total / (step + 1))
    return losses
