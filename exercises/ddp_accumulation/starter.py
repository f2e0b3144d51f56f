# quizapp: exercise=ddp_accumulation
"""Gradient accumulation under DistributedDataParallel. Grade it with: quizapp grade ddp_accumulation.py"""

import torch


def train_ddp_accumulation(model, loader, optimizer, loss_fn, accum_steps, *, max_grad_norm=None) -> int:
    """One pass over this rank's `loader`, one optimizer step per group of `accum_steps` micro-batches.

    Runs in every rank of an initialised process group (the grader starts 2 ranks).

    model       -- a torch.nn.parallel.DistributedDataParallel; its gradients are averaged across ranks
    loader      -- yields this rank's (inputs, targets), already on the device; every rank has the same
                   count and sizes; the last micro-batch may be smaller than the others
    optimizer   -- steps once per group (the last group may hold fewer than accum_steps)
    loss_fn     -- loss_fn(outputs, targets) -> the micro-batch's *mean* loss
    accum_steps -- how many consecutive micro-batches make one group
    max_grad_norm -- if given, clip the group's accumulated gradient just before its step

    Each group's update must equal one step on all ranks' micro-batches of that group together (mean
    loss over all their samples), with gradients all-reduced once per group. Returns the steps taken.
    """
    # TODO: collect consecutive micro-batches into groups of accum_steps (keep the trailing, shorter group)
    # TODO: for each group of N samples: forward + backward each micro-batch of n_i samples, loss weighted n_i / N
    # TODO: every micro-batch but the group's last: forward AND backward inside `with model.no_sync():`
    # TODO: the last micro-batch outside no_sync, so its backward all-reduces the accumulated gradients
    # TODO: if max_grad_norm: clip; then optimizer.step(), then zero the grads; return the number of steps
    raise NotImplementedError("train_ddp_accumulation is not written yet: see the TODOs in this file")
