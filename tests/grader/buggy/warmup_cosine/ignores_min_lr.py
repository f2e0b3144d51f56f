# quizapp: exercise=warmup_cosine
# expect: fail schedule-formula floor-past-end
"""Bug: min_lr_ratio is validated but the cosine always decays to 0 and stays there."""
import math

from torch.optim.lr_scheduler import LambdaLR


def get_cosine_schedule_with_warmup(optimizer, warmup_steps, total_steps, *, min_lr_ratio=0.0):
    if warmup_steps < 0 or total_steps < warmup_steps or not 0.0 <= min_lr_ratio <= 1.0:
        raise ValueError("bad arguments")

    def f(step):
        if step < warmup_steps:
            return step / warmup_steps
        if step > total_steps:
            return 0.0
        p = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        return 0.5 * (1 + math.cos(math.pi * p))

    return LambdaLR(optimizer, f)
