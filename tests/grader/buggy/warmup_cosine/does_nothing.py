# quizapp: exercise=warmup_cosine
# expect: fail schedule-formula first-step-zero floor-past-end validation
# expect: skip param-groups resume
"""Does nothing: a scheduler that keeps every learning rate where it started."""

import torch


def get_cosine_schedule_with_warmup(optimizer, warmup_steps, total_steps, *,
                                    min_lr_ratio=0.0) -> torch.optim.lr_scheduler.LRScheduler:
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
