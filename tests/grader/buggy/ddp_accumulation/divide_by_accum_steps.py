# quizapp: exercise=ddp_accumulation
# expect: fail trailing-group short-last-micro-batch
"""BUGGY (divide_by_accum_steps): weights every micro-batch 1 / accum_steps, wrong for short ones and the trailing group."""

import contextlib

import torch


def train_ddp_accumulation(model, loader, optimizer, loss_fn, accum_steps, *, max_grad_norm=None) -> int:
    model.train()
    optimizer.zero_grad(set_to_none=True)
    steps = 0

    def run_group(group):
        nonlocal steps
        # n_i / N weights make the group's gradient the mean over all its samples, whatever the sizes;
        # DDP then averages the ranks' gradients, which is the mean over every rank's samples.
        total = sum(len(inputs) for inputs, _ in group)
        for i, (inputs, targets) in enumerate(group):
            last = i == len(group) - 1
            # DDP decides at forward time whether this backward all-reduces, so no_sync wraps forward
            # and backward. Only the group's last backward syncs, and it all-reduces the whole
            # accumulated .grad: one all-reduce per group instead of one per micro-batch.
            with contextlib.nullcontext() if last else model.no_sync():
                loss = loss_fn(model(inputs), targets)
                (loss / accum_steps).backward()
        if max_grad_norm is not None:
            # After the sync every rank holds the same averaged gradient, so every rank clips alike.
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        steps += 1

    group = []
    for batch in loader:
        group.append(batch)
        if len(group) == accum_steps:
            run_group(group)
            group = []
    if group:  # the trailing, shorter group still gets its step (and its all-reduce)
        run_group(group)
    return steps
