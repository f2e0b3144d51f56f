# quizapp: exercise=grad_accumulation
"""Gradient accumulation. Grade it with: quizapp grade grad_accumulation.py"""

import torch


def train_with_accumulation(model, loader, optimizer, loss_fn, accum_steps, *,
                            max_grad_norm=None) -> int:
    """One pass over `loader`, one optimizer step per group of `accum_steps` micro-batches.

    model       -- already on its device
    loader      -- yields (inputs, targets) already on the model's device; the last micro-batch
                   may be smaller than the others
    optimizer   -- steps once per group (the last group may hold fewer than accum_steps)
    loss_fn     -- loss_fn(outputs, targets) -> the micro-batch's *mean* loss
    accum_steps -- how many consecutive micro-batches make one group
    max_grad_norm -- if given, clip the group's accumulated gradient just before its step

    Each group's update must equal one step on the concatenation of its micro-batches (mean loss
    over all the group's samples). Returns the number of optimizer steps taken.
    """
    # TODO: go through `loader` once, collecting consecutive micro-batches into groups of accum_steps
    # TODO: for each group of N samples in total: forward + backward each micro-batch of n_i samples
    #       with its loss weighted by n_i / N (backward adds into .grad; do not zero inside a group)
    # TODO: if max_grad_norm: clip the accumulated gradients; then optimizer.step(), then zero the grads
    # TODO: do not forget the trailing group when the count of micro-batches is not a multiple
    # TODO: return the number of optimizer steps taken
    raise NotImplementedError("train_with_accumulation is not written yet: see the TODOs in this file")
