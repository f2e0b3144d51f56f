# quizapp: exercise=grad_accumulation
# expect: pass
"""Right, written as Lightning's automatic optimisation runs it: every micro-batch's forward and
backward is a closure; the group's last one runs inside optimizer.step(closure), after len(loader)
told the loop where the trailing group ends."""

import torch


def train_with_accumulation(model, loader, optimizer, loss_fn, accum_steps, *, max_grad_norm=None) -> int:
    n_batches = len(loader)
    sizes = [len(x) for x, _ in loader]
    steps = 0
    for index, (x, y) in enumerate(loader):
        group_start = index - index % accum_steps
        group_end = min(group_start + accum_steps, n_batches)
        last = index == group_end - 1
        weight = len(x) / sum(sizes[group_start:group_end])

        def closure(x=x, y=y, weight=weight, last=last):
            loss = loss_fn(model(x), y) * weight
            loss.backward()
            if last and max_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            return loss

        if not last:
            closure()
            continue
        optimizer.step(closure)
        optimizer.zero_grad()
        steps += 1
    return steps
