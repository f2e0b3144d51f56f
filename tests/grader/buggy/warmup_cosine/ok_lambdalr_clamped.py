# quizapp: exercise=warmup_cosine
# expect: pass
"""Correct: torch's LambdaLR with a transformers-style multiplier whose progress is clamped at 1,
so the floor holds past the end."""
import math

from torch.optim.lr_scheduler import LambdaLR


def get_cosine_schedule_with_warmup(optimizer, warmup_steps, total_steps, *, min_lr_ratio=0.0):
    if warmup_steps < 0:
        raise ValueError("warmup_steps must be >= 0")
    if total_steps < warmup_steps:
        raise ValueError("total_steps must be >= warmup_steps")
    if not 0.0 <= min_lr_ratio <= 1.0:
        raise ValueError("min_lr_ratio must be in [0, 1]")

    def lr_lambda(current_step):
        if current_step < warmup_steps:
            return float(current_step) / float(max(1, warmup_steps))
        progress = min(1.0, float(current_step - warmup_steps) / float(max(1, total_steps - warmup_steps)))
        return max(min_lr_ratio, min_lr_ratio + (1.0 - min_lr_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress)))

    return LambdaLR(optimizer, lr_lambda)
