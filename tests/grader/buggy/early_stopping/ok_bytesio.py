# quizapp: exercise=early_stopping
# expect: pass
"""Right, written another way: the best state serialised with torch.save into memory (as a
checkpoint file would be), the copy kept on the CPU."""

import io
import math

import torch


class EarlyStopping:
    def __init__(self, patience=5, min_delta=0.0, mode="min", restore_best=True):
        if patience < 1 or min_delta < 0 or mode not in ("min", "max"):
            raise ValueError(f"bad arguments: patience={patience}, min_delta={min_delta}, mode={mode!r}")
        self.patience, self.min_delta, self.mode, self.restore_best = patience, min_delta, mode, restore_best
        self.best = float("inf") if mode == "min" else float("-inf")
        self.best_epoch = 0
        self.bad = 0
        self.n = 0
        self.blob = None

    def step(self, metric, model) -> bool:
        metric = torch.as_tensor(metric, dtype=torch.float64).item()
        n, self.n = self.n, self.n + 1
        if math.isfinite(metric):
            gain = (self.best - metric) if self.mode == "min" else (metric - self.best)
            if gain > self.min_delta:
                self.best, self.best_epoch, self.bad = metric, n, 0
                buffer = io.BytesIO()
                torch.save({k: v.cpu() for k, v in model.state_dict().items()}, buffer)
                self.blob = buffer.getvalue()
                return False
            self.bad += 1
            if self.bad < self.patience:
                return False
        if self.restore_best and self.blob is not None:
            model.load_state_dict(torch.load(io.BytesIO(self.blob), weights_only=True))
        return True
