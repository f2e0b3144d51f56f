# quizapp: exercise=loss_scaler
# expect: error scale-trajectory
# expect: may-not-pass growth-only-if-finite
# expect: starts scale-trajectory: "with DynamicLossScaler(init_scale=1024, growth_factor=2, backoff_factor=0.25, growth_interval=2): AssertionError"
"""Bug: assumes backoff_factor == 1 / growth_factor and asserts it, so a valid configuration raises."""

import torch


class DynamicLossScaler:
    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        assert backoff_factor * growth_factor == 1.0
        self.scale = float(init_scale)
        self.growth_factor = growth_factor
        self.growth_interval = growth_interval
        self._clean_steps = 0

    def scale_loss(self, loss):
        return loss * self.scale

    @torch.no_grad()
    def step(self, optimizer) -> bool:
        grads = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        for grad in grads:
            grad.div_(self.scale)
        if not all(bool(torch.isfinite(grad).all()) for grad in grads):
            self.scale /= self.growth_factor
            self._clean_steps = 0
            return False
        optimizer.step()
        self._clean_steps += 1
        if self._clean_steps == self.growth_interval:
            if float(torch.tensor(self.scale * self.growth_factor, dtype=torch.float64).float()) != float("inf"):
                self.scale *= self.growth_factor
            self._clean_steps = 0
        return True
