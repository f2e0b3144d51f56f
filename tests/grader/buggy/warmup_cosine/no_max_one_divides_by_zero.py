# quizapp: exercise=warmup_cosine
# expect: error schedule-formula floor-past-end
# expect: starts schedule-formula: "with warmup_steps=20, total_steps=20, min_lr_ratio=0.0, scheduler.step() number 20: ZeroDivisionError"
# expect: starts floor-past-end: "with warmup_steps=20, total_steps=20, min_lr_ratio=0.0, scheduler.step() number 20: ZeroDivisionError"
"""Bug: divides by total_steps - warmup_steps without max(1, ...): raises ZeroDivisionError once
warmup_steps == total_steps and the schedule reaches them."""
import math

from torch.optim.lr_scheduler import LambdaLR


def get_cosine_schedule_with_warmup(optimizer, warmup_steps, total_steps, *, min_lr_ratio=0.0):
    if warmup_steps < 0 or total_steps < warmup_steps or not 0.0 <= min_lr_ratio <= 1.0:
        raise ValueError("bad arguments")

    def f(step):
        if step < warmup_steps:
            return step / warmup_steps
        if step > total_steps:
            return min_lr_ratio
        p = (step - warmup_steps) / (total_steps - warmup_steps)
        return min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * p))

    return LambdaLR(optimizer, f)
