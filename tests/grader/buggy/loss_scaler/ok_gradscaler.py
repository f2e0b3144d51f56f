# quizapp: exercise=loss_scaler
# expect: pass
"""Correct: delegates to torch.amp.GradScaler itself (the same four knobs)."""

import torch


class DynamicLossScaler:
    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self._knobs = dict(init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                           growth_interval=growth_interval)
        self._scaler = None  # built on the first loss, on that loss's device

    @property
    def scale(self) -> float:
        return self._knobs["init_scale"] if self._scaler is None else self._scaler.get_scale()

    def scale_loss(self, loss):
        if self._scaler is None:
            self._scaler = torch.amp.GradScaler(loss.device.type, **self._knobs)
        return self._scaler.scale(loss)

    def step(self, optimizer) -> bool:
        self._scaler.unscale_(optimizer)
        grads = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        clean = all(bool(torch.isfinite(g).all()) for g in grads)
        self._scaler.step(optimizer)  # skipped by GradScaler itself when not clean
        self._scaler.update()
        return clean
