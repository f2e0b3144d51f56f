# quizapp: exercise=loss_scaler
# expect: pass
"""Correct: keeps the scale and the clean-step count in float32/int tensors, as GradScaler does."""

import torch


class DynamicLossScaler:
    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self._scale = torch.tensor(init_scale, dtype=torch.float32)
        self._clean = torch.tensor(0, dtype=torch.int32)
        self.growth_factor = growth_factor
        self.backoff_factor = backoff_factor
        self.growth_interval = growth_interval

    @property
    def scale(self) -> float:
        return self._scale.item()

    def scale_loss(self, loss):
        return loss * self._scale.to(loss.device)

    @torch.no_grad()
    def step(self, optimizer) -> bool:
        inv = self._scale.double().reciprocal().float()
        found_inf = torch.zeros((), dtype=torch.bool)
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.mul_(inv.to(p.grad.device))
                    found_inf |= ~torch.isfinite(p.grad).all().cpu()
        if found_inf:
            self._scale *= self.backoff_factor
            self._clean.zero_()
            return False
        optimizer.step()
        self._clean += 1
        if int(self._clean) == self.growth_interval:
            grown = self._scale * self.growth_factor
            if torch.isfinite(grown):
                self._scale = grown
            self._clean.zero_()
        return True
