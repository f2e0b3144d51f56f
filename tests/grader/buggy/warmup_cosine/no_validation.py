# quizapp: exercise=warmup_cosine
# expect: fail validation
"""Bug: no argument checks (otherwise correct)."""
import math

from torch.optim.lr_scheduler import LambdaLR


def get_cosine_schedule_with_warmup(optimizer, warmup_steps, total_steps, *, min_lr_ratio=0.0):
    def f(step):
        if step < warmup_steps:
            return step / warmup_steps
        if step > total_steps:
            return min_lr_ratio
        p = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        return min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * p))

    return LambdaLR(optimizer, f)
