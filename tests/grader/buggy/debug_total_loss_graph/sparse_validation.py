# quizapp: exercise=debug_total_loss_graph
# expect: fail memory-stays-flat
# expect: fail honest-fix: "the held-out batch was scored 4 times where the fixed script scores it 40 times"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: the held-out batch scored every 10th step only; it grows 10 times more slowly.


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
        if step % 10 == 0:
            model.eval()
            val_loss = F.cross_entropy(model(x_val), y_val)
            val_total += val_loss
            model.train()
        if log is not None:
            log(step, losses[-1], val_total / (step + 1))
    return losses
