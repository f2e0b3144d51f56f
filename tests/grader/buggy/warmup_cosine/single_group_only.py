# quizapp: exercise=warmup_cosine
# expect: fail param-groups
"""Bug: a hand-written scheduler that sets every group's lr from the first group's initial lr."""
import math

from torch.optim.lr_scheduler import LRScheduler


class WarmupCosine(LRScheduler):
    def __init__(self, optimizer, warmup_steps, total_steps, min_lr_ratio):
        self.warmup_steps, self.total_steps, self.min_lr_ratio = warmup_steps, total_steps, min_lr_ratio
        super().__init__(optimizer)

    def get_lr(self):
        s, w, t, r = self.last_epoch, self.warmup_steps, self.total_steps, self.min_lr_ratio
        if s < w:
            m = s / w
        elif s > t:
            m = r
        else:
            m = r + (1 - r) * 0.5 * (1 + math.cos(math.pi * (s - w) / max(1, t - w)))
        return [self.base_lrs[0] * m for _ in self.optimizer.param_groups]


def get_cosine_schedule_with_warmup(optimizer, warmup_steps, total_steps, *, min_lr_ratio=0.0):
    if warmup_steps < 0 or total_steps < warmup_steps or not 0.0 <= min_lr_ratio <= 1.0:
        raise ValueError("bad arguments")
    return WarmupCosine(optimizer, warmup_steps, total_steps, min_lr_ratio)
