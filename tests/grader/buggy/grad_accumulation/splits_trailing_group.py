# quizapp: exercise=grad_accumulation
# expect: fail trailing-group short-last-micro-batch
# expect: fail optimizer-steps: "accum_steps=4" "saw [4, 2, 1]" "split into 2 steps"
"""BUGGY (splits_trailing_group): once in the trailing group, the loop switches accum_steps to the
remainder but keeps counting micro-batches from the start of the loader, so a step falls wherever
the running index hits a multiple of the remainder (7 micro-batches, accum 4: steps after 4, 6 and 7)."""

import torch


def train_with_accumulation(model, loader, optimizer, loss_fn, accum_steps, *,
                            max_grad_norm=None) -> int:
    model.train()
    batches = list(loader)
    n = len(batches)
    remainder = n % accum_steps
    last_full = n - remainder  # index of the first micro-batch of the trailing group
    steps, group_size = 0, accum_steps
    optimizer.zero_grad(set_to_none=True)
    for i, (inputs, targets) in enumerate(batches):
        if i >= last_full:
            group_size = remainder
        loss = loss_fn(model(inputs), targets)
        (loss / group_size).backward()
        if (i + 1) % group_size == 0 or i == n - 1:
            if max_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            steps += 1
    return steps
