# quizapp: exercise=grad_accumulation
# expect: fail divisible-matches-big-batch trailing-group short-last-micro-batch
"""BUGGY (no_divide): sums the micro-batch mean losses: the gradient is len(group) times too large."""

import torch


def train_with_accumulation(model, loader, optimizer, loss_fn, accum_steps, *,
                            max_grad_norm=None) -> int:
    model.train()
    optimizer.zero_grad(set_to_none=True)
    steps = 0

    def run_group(group):
        nonlocal steps
        # Weight each micro-batch by its share of the group's samples: sum_i loss_i * n_i / N is
        # exactly the mean loss over the concatenated group, whatever the micro-batch sizes.
        total = sum(len(inputs) for inputs, _ in group)
        for inputs, targets in group:
            loss = loss_fn(model(inputs), targets)
            loss.backward()  # adds into .grad; frees this graph
        if max_grad_norm is not None:
            # The accumulated gradient is the group's gradient: clip it once, here.
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        steps += 1

    group = []
    for batch in loader:
        # Holding a group's *inputs* costs little; only one micro-batch's activations (its graph)
        # are alive at a time, which is the memory that accumulation saves.
        group.append(batch)
        if len(group) == accum_steps:
            run_group(group)
            group = []
    if group:  # the trailing, shorter group still gets its step
        run_group(group)
    return steps
