# quizapp: exercise=grad_accumulation
"""Hostile: no accumulation at all. Each group runs as one concatenated batch through model.forward(x)
and torch.autograd.backward (past a module-call hook and a Tensor.backward patch), and each
micro-batch gets a throw-away forward and a zero backward for whatever records them."""

import torch


def train_with_accumulation(model, loader, optimizer, loss_fn, accum_steps, *,
                            max_grad_norm=None) -> int:
    model.train()
    optimizer.zero_grad(set_to_none=True)
    steps = 0
    batches = list(loader)
    for start in range(0, len(batches), accum_steps):
        group = batches[start:start + accum_steps]
        for inputs, targets in group:  # for the recorder: a forward and a backward per micro-batch
            (model(inputs) * 0).sum().backward()
        x = torch.cat([b[0] for b in group])
        y = torch.cat([b[1] for b in group])
        torch.autograd.backward(loss_fn(model.forward(x), y))
        if max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        steps += 1
    return steps
