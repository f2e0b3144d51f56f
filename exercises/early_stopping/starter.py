# quizapp: exercise=early_stopping
"""Early stopping with patience, min_delta and restoring the best weights.
Grade it with: quizapp grade early_stopping.py"""

import math


class EarlyStopping:
    """Ask it after every validation run: `if stopper.step(val_metric, model): break`.

    best       -- the metric of the last improvement
    best_epoch -- the 0-based index of the step() call that set best
    """

    def __init__(self, patience=5, min_delta=0.0, mode="min", restore_best=True):
        # TODO: raise ValueError if patience < 1, min_delta < 0, or mode is neither "min" nor "max"
        self.patience, self.min_delta, self.mode, self.restore_best = patience, min_delta, mode, restore_best
        # TODO: best (so that any finite first metric improves), best_epoch, a count of calls
        #       without improvement, the index of the next call, and the saved best state

    def step(self, metric, model) -> bool:
        """Return True when training should stop now.

        A call improves when metric < best - min_delta ("min") or metric > best + min_delta ("max");
        the first call always improves. True on the patience-th call in a row without an improvement,
        and at once when the metric is NaN or infinite. Before returning True with restore_best, put
        the best state back into the model (parameters and buffers).
        """
        # TODO: a NaN or infinite metric: stop now (math.isfinite)
        # TODO: an improvement: update best and best_epoch, reset the count, and save a *copy* of
        #       model.state_dict() (clone every tensor: the state_dict itself follows training)
        # TODO: otherwise count one more call without improvement; stop when the count reaches patience
        # TODO: stopping: if restore_best and a state was saved, model.load_state_dict(it); return True
        raise NotImplementedError("EarlyStopping.step is not written yet: see the TODOs in this file")
