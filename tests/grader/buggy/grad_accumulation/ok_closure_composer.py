# quizapp: exercise=grad_accumulation
# expect: pass
"""Right, written as Composer's trainer runs it: the whole group (every micro-batch's forward and
backward, then clipping) runs inside the closure handed to optimizer.step; gradients are zeroed
after the step."""

import torch


def train_with_accumulation(model, loader, optimizer, loss_fn, accum_steps, *, max_grad_norm=None) -> int:
    batches = list(loader)
    steps = 0
    for start in range(0, len(batches), accum_steps):
        group = batches[start:start + accum_steps]

        def train_microbatches(group=group):
            total = sum(len(x) for x, _ in group)
            loss_sum = torch.zeros(())
            for x, y in group:
                loss = loss_fn(model(x), y) * (len(x) / total)
                loss.backward()
                loss_sum = loss_sum + loss.detach().cpu()
            if max_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            return loss_sum

        optimizer.step(closure=train_microbatches)
        optimizer.zero_grad(set_to_none=True)
        steps += 1
    return steps
