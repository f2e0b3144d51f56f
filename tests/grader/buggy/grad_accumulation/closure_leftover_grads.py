# quizapp: exercise=grad_accumulation
# expect: fail no-zero-inside-group: "after the function returned, 4 parameters still held gradients"
# expect: says no-zero-inside-group: "the last group's gradients were never zeroed"
"""Bug (Composer's loop): exact in every group, but the closure zeroes the gradients when it starts,
so after the last step they are still in .grad when the function returns."""

import torch


def train_with_accumulation(model, loader, optimizer, loss_fn, accum_steps, *, max_grad_norm=None) -> int:
    batches = list(loader)
    steps = 0
    for start in range(0, len(batches), accum_steps):
        group = batches[start:start + accum_steps]

        def train_microbatches(group=group):
            optimizer.zero_grad()
            total = sum(len(x) for x, _ in group)
            for x, y in group:
                (loss_fn(model(x), y) * (len(x) / total)).backward()
            if max_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)

        optimizer.step(closure=train_microbatches)
        steps += 1
    return steps
