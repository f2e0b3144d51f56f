# quizapp: exercise=debug_total_loss_graph
# expect: fail matches-fixed-run
# expect: fail memory-stays-flat: "still held the graphs of 39 earlier forward passes"
"""Near miss: saved-tensor hooks of its own (identity pack and unpack) around the held-out pass: the graph, and the leak, stay."""

import torch
import torch.nn.functional as F


def train(model, batches, optimizer, val_batch, log=None):
    """One optimizer step per batch, then the held-out batch is scored; returns the training loss of
    every step. `log(step, loss, val_mean)`, if given, receives the running mean of the held-out loss."""
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
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            val_loss = F.cross_entropy(model(x_val), y_val)
        val_total += val_loss
        model.train()
        if log is not None:
            log(step, losses[-1], val_total / (step + 1))
    return losses
