# quizapp: exercise=warmup_cosine
"""Reference solution: linear warmup, then cosine decay to a floor that holds past the end."""

import math

import torch
from torch.optim.lr_scheduler import LambdaLR


def get_cosine_schedule_with_warmup(optimizer, warmup_steps, total_steps, *,
                                    min_lr_ratio=0.0) -> torch.optim.lr_scheduler.LRScheduler:
    if warmup_steps < 0:
        raise ValueError(f"warmup_steps must be >= 0, got {warmup_steps}")
    if total_steps < warmup_steps:
        raise ValueError(f"total_steps ({total_steps}) must be >= warmup_steps ({warmup_steps})")
    if not 0.0 <= min_lr_ratio <= 1.0:  # also rejects NaN
        raise ValueError(f"min_lr_ratio must be in [0, 1], got {min_lr_ratio}")

    def multiplier(step: int) -> float:
        if step < warmup_steps:
            return step / warmup_steps  # step 0 runs at lr 0
        if step > total_steps:
            return min_lr_ratio  # hold the floor: cos would climb back up past progress 1
        progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        return min_lr_ratio + (1.0 - min_lr_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))

    # LambdaLR multiplies each group's own initial lr, and its state_dict carries the step count
    # (last_epoch): the multiplier is a pure function of the step, so resuming is exact.
    return LambdaLR(optimizer, multiplier)
