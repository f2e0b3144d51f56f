# quizapp: exercise=early_stopping
# expect: fail min-delta: "wrong way" "best + min_delta"
"""Bug: in mode 'min', min_delta is added to best: a slightly worse metric counts as an improvement."""

import math


class EarlyStopping:
    def __init__(self, patience=5, min_delta=0.0, mode="min", restore_best=True):
        if patience < 1:
            raise ValueError(f"patience must be >= 1, got {patience}")
        if not min_delta >= 0:
            raise ValueError(f"min_delta must be >= 0, got {min_delta}")
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        self.patience, self.min_delta, self.mode, self.restore_best = patience, min_delta, mode, restore_best
        self.best = math.inf if mode == "min" else -math.inf
        self.best_epoch = None
        self.calls = 0
        self.calls_without_improvement = 0
        self.best_state = None

    def improves(self, metric: float) -> bool:
        if self.mode == "min":
            return metric < self.best + self.min_delta
        return metric > self.best + self.min_delta

    def step(self, metric, model) -> bool:
        metric = float(metric)
        epoch = self.calls
        self.calls += 1
        if not math.isfinite(metric):
            return self.stop(model)
        if self.improves(metric):
            self.best, self.best_epoch = metric, epoch
            self.calls_without_improvement = 0
            self.best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            return False
        self.calls_without_improvement += 1
        if self.calls_without_improvement >= self.patience:
            return self.stop(model)
        return False

    def stop(self, model) -> bool:
        if self.restore_best and self.best_state is not None:
            model.load_state_dict(self.best_state)
        return True
