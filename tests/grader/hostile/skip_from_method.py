# quizapp: exercise=loss_scaler
"""Hostile: a class whose methods raise the grader's CheckSkipped, found through sys.modules. The
checks call these methods on an instance, not through the solution's module, so no wrapper of the
module's functions sees the raise: only the frames it passed through tell."""

import sys


def _skipped():
    return next(vars(m)["CheckSkipped"] for m in list(sys.modules.values()) if "CheckSkipped" in vars(m))


class DynamicLossScaler:
    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.scale = float(init_scale)

    def scale_loss(self, loss):
        raise _skipped()("not applicable on this machine")

    def step(self, optimizer):
        raise _skipped()("not applicable on this machine")
