# quizapp: exercise=debug_total_loss_graph
# expect: fail honest-fix: "the held-out batch was scored 0 times where the fixed script scores it 40 times"
import torch.nn.functional as F

# A cosmetic fix: the held-out loss dropped, and the growth with it.


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
        if log is not None:
            log(step, losses[-1], val_total / (step + 1))
    return losses
