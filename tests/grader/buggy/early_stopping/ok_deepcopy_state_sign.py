# quizapp: exercise=early_stopping
# expect: pass
"""Right, written another way: copy.deepcopy of the state dict, and mode 'max' by a sign (best
itself stays the metric)."""

import copy
import math


class EarlyStopping:
    def __init__(self, patience=5, min_delta=0.0, mode="min", restore_best=True):
        if patience < 1:
            raise ValueError("patience < 1")
        if min_delta < 0:
            raise ValueError("min_delta < 0")
        if mode != "min" and mode != "max":
            raise ValueError(f"unknown mode {mode}")
        self.sign = 1 if mode == "min" else -1
        self.patience, self.min_delta, self.restore_best = patience, min_delta, restore_best
        self.best = self.sign * math.inf
        self.best_epoch = -1
        self.wait = 0
        self.calls = 0
        self.snapshot = None

    def step(self, metric, model) -> bool:
        i = self.calls
        self.calls += 1
        stop = False
        if not math.isfinite(metric):
            stop = True
        elif self.sign * metric < self.sign * self.best - self.min_delta:
            self.best, self.best_epoch, self.wait = metric, i, 0
            self.snapshot = copy.deepcopy(model.state_dict())
        else:
            self.wait += 1
            stop = self.wait >= self.patience
        if stop and self.restore_best and self.snapshot is not None:
            model.load_state_dict(self.snapshot)
        return stop
