# quizapp: exercise=loss_scaler
"""Dynamic loss scaling from scratch. Grade it with: quizapp grade loss_scaler.py"""

import math

import torch


class DynamicLossScaler:
    """What torch.amp.GradScaler does, in a few lines.

    Usage, per iteration:
        scaler.scale_loss(loss).backward()
        stepped = scaler.step(optimizer)   # False when the step was skipped
    """

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.scale = float(init_scale)  # the current scale (a Python float)
        # TODO: keep the factors, the interval, and a count of clean steps in a row

    def scale_loss(self, loss):
        """Return loss * scale."""
        # TODO
        raise NotImplementedError("scale_loss is not written yet: see the TODOs in this file")

    def step(self, optimizer) -> bool:
        """Unscale the gradients in place; step unless one holds inf/NaN; adjust the scale.

        Returns True if optimizer.step() ran, False if the step was skipped.
        """
        # TODO: for every parameter of every param group that has a .grad: divide it by the
        #       scale in place, and note whether any value is inf or NaN (torch.isfinite)
        # TODO: overflow: do not step; scale *= backoff_factor; reset the clean count; return False
        # TODO: clean: optimizer.step(); count it; after growth_interval clean steps in a row,
        #       scale *= growth_factor (only if the result is finite) and reset the count; return True
        raise NotImplementedError("step is not written yet: see the TODOs in this file")
