# quizapp: exercise=warmup_cosine
# expect: fail floor-past-end: "rising again" "transformers"
"""Bug: the transformers formula; past total_steps the cosine climbs back up."""
import math

from torch.optim.lr_scheduler import LambdaLR


def get_cosine_schedule_with_warmup(optimizer, warmup_steps, total_steps, *, min_lr_ratio=0.0):
    if warmup_steps < 0 or total_steps < warmup_steps or not 0.0 <= min_lr_ratio <= 1.0:
        raise ValueError("bad arguments")

    def f(step):
        if step < warmup_steps:
            return step / max(1, warmup_steps)
        p = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        return min_lr_ratio + (1 - min_lr_ratio) * max(0.0, 0.5 * (1 + math.cos(math.pi * p)))

    return LambdaLR(optimizer, f)
