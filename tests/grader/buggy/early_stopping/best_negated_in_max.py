# quizapp: exercise=early_stopping
# expect: fail best-and-epoch: "metric itself"
"""Bug: mode 'max' is handled by negating the metric, and best keeps the negated value."""

import copy
import math


class EarlyStopping:
    def __init__(self, patience=5, min_delta=0.0, mode="min", restore_best=True):
        if patience < 1 or min_delta < 0 or mode not in ("min", "max"):
            raise ValueError("invalid arguments")
        self.patience, self.min_delta, self.restore_best = patience, min_delta, restore_best
        self.sign = 1.0 if mode == "min" else -1.0
        self.best, self.best_epoch = math.inf, None
        self.epoch, self.wait, self.state = 0, 0, None

    def step(self, metric, model) -> bool:
        score = self.sign * float(metric)
        epoch, self.epoch = self.epoch, self.epoch + 1
        if math.isfinite(score) and score < self.best - self.min_delta:
            self.best, self.best_epoch, self.wait = score, epoch, 0
            self.state = copy.deepcopy(model.state_dict())
            return False
        self.wait += 1
        if not math.isfinite(score) or self.wait >= self.patience:
            if self.restore_best and self.state is not None:
                model.load_state_dict(self.state)
            return True
        return False
