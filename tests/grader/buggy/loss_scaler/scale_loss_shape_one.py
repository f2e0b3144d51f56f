# quizapp: exercise=loss_scaler
# expect: fail scale-loss: "shape [1]" "0-dim"
"""Bug: scale_loss multiplies by a shape-[1] tensor, so a 0-dim loss comes back with shape [1]."""

import math

import torch


class DynamicLossScaler:
    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.scale = float(init_scale)
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval
        self._clean_steps = 0  # clean steps in a row since the last growth or overflow

    def scale_loss(self, loss):
        return loss * torch.tensor([self.scale], device=loss.device)

    @torch.no_grad()
    def step(self, optimizer) -> bool:
        inv_scale = 1.0 / self.scale
        found_inf = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad.mul_(inv_scale)
                # isfinite is False for inf, -inf and NaN alike (NaN != NaN, so a == test misses it)
                if not bool(torch.isfinite(p.grad).all()):
                    found_inf = True
        if found_inf:
            self.scale *= self.backoff_factor
            self._clean_steps = 0
            return False
        optimizer.step()
        self._clean_steps += 1
        if self._clean_steps == self.growth_interval:
            grown = self.scale * self.growth_factor
            # GradScaler keeps its scale in float32: growth that would be inf there is refused,
            # even where a Python float (float64) still holds it (2**127 * 2 = 2**128).
            if math.isfinite(float(torch.tensor(grown, dtype=torch.float64).float())):
                self.scale = grown
            self._clean_steps = 0
        return True
