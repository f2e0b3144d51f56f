# quizapp: exercise=warmup_cosine
"""Linear warmup + cosine decay learning-rate schedule. Grade it with: quizapp grade warmup_cosine.py"""

import math

import torch


def get_cosine_schedule_with_warmup(optimizer, warmup_steps, total_steps, *,
                                    min_lr_ratio=0.0) -> torch.optim.lr_scheduler.LRScheduler:
    """Return a scheduler that sets every param group's lr to (its initial lr) * m(s),
    where s is the number of scheduler.step() calls so far:

      s < warmup_steps:                m = s / warmup_steps          (lr 0 during the first step)
      warmup_steps <= s <= total_steps: p = (s - warmup_steps) / max(1, total_steps - warmup_steps)
                                        m = min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + cos(pi * p))
      s > total_steps:                 m = min_lr_ratio              (stay at the floor)

    Raise ValueError if warmup_steps < 0, total_steps < warmup_steps, or min_lr_ratio is not in [0, 1].
    """
    # TODO: validate the arguments (ValueError with a message that says which one is wrong)
    # TODO: write the multiplier m(step) as a pure function of the step number
    #       (no counter of your own: the scheduler's state_dict must be enough to resume)
    # TODO: return torch.optim.lr_scheduler.LambdaLR(optimizer, <your function>)
    raise NotImplementedError("get_cosine_schedule_with_warmup is not written yet: see the TODOs in this file")
