# quizapp: exercise=warmup_cosine
# expect: fail resume
"""Bug: each group's position lives in a closure counter that state_dict() does not carry."""
import math

from torch.optim.lr_scheduler import LambdaLR


def get_cosine_schedule_with_warmup(optimizer, warmup_steps, total_steps, *, min_lr_ratio=0.0):
    if warmup_steps < 0 or total_steps < warmup_steps or not 0.0 <= min_lr_ratio <= 1.0:
        raise ValueError("bad arguments")

    def make_lambda():
        calls = {"n": 0}  # LambdaLR calls each group's lambda once at construction, then once per step

        def f(_ignored):
            s = calls["n"]
            calls["n"] += 1
            if s < warmup_steps:
                return s / warmup_steps
            if s > total_steps:
                return min_lr_ratio
            p = (s - warmup_steps) / max(1, total_steps - warmup_steps)
            return min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * p))

        return f

    return LambdaLR(optimizer, [make_lambda() for _ in optimizer.param_groups])
