# quizapp: exercise=debug_total_loss_graph
# expect: fail memory-stays-flat
# expect: fail honest-fix: "the learning rate was 0 at all 40 steps"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix that changes nothing here: the learning rate set to 0; the memory still grows.


def train(model, batches, optimizer, val_batch, log=None):
    for group in optimizer.param_groups:
        group["lr"] = 0.0
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
        model.train()
        if log is not None:
            log(step, losses[-1], val_total / (step + 1))
    return losses
