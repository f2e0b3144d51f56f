# quizapp: exercise=debug_total_loss_graph
# expect: fail matches-fixed-run
# expect: fail memory-stays-flat: "the symptom is still there: memory grows every step"
"""Near miss: non-reentrant checkpointing of the held-out pass (it saves through hooks of its own): the graph, and the leak, stay."""

import torch
import torch.nn.functional as F
import torch.utils.checkpoint


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
        out = torch.utils.checkpoint.checkpoint(model, x_val, use_reentrant=False)
        val_loss = F.cross_entropy(out, y_val)
        val_total += val_loss
        model.train()
        if log is not None:
            log(step, losses[-1], val_total / (step + 1))
    return losses
