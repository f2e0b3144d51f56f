# quizapp: exercise=early_stopping
# expect: pass
"""Right, written another way: a deep copy of the whole model as the best state, and the count of
calls without improvement taken as the distance from best_epoch."""

import copy
import math


class EarlyStopping:
    def __init__(self, patience=5, min_delta=0.0, mode="min", restore_best=True):
        if not isinstance(patience, int) or patience < 1:
            raise ValueError("patience must be a whole number >= 1")
        if min_delta < 0:
            raise ValueError("min_delta must be >= 0")
        if mode not in {"min", "max"}:
            raise ValueError("mode must be 'min' or 'max'")
        self.patience = patience
        self.min_delta = min_delta
        self.mode = mode
        self.restore_best = restore_best
        self.best = None
        self.best_epoch = None
        self.epoch = -1
        self.best_model = None

    def step(self, metric, model) -> bool:
        self.epoch += 1
        if math.isnan(metric) or math.isinf(metric):
            return self._finish(model)
        if self.best is None:
            better = True
        elif self.mode == "min":
            better = self.best - metric > self.min_delta
        else:
            better = metric - self.best > self.min_delta
        if better:
            self.best, self.best_epoch = metric, self.epoch
            self.best_model = copy.deepcopy(model)
            return False
        if self.epoch - self.best_epoch >= self.patience:
            return self._finish(model)
        return False

    def _finish(self, model) -> bool:
        if self.restore_best and self.best_model is not None:
            model.load_state_dict(self.best_model.state_dict())
        return True
