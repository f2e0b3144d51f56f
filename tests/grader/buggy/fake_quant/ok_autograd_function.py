# quizapp: exercise=fake_quant
# expect: pass
"""Deliberately buggy: NOT a bug: a custom autograd.Function whose backward passes the gradient through."""

import torch


class _FakeQuant(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmax):
        return torch.clamp(torch.round(x / scale), -qmax, qmax) * scale

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


def fake_quantize(x, *, bits=8, axis=None):
    if bits not in range(2, 17):
        raise ValueError("bits must be an integer from 2 to 16")
    qmax = 2 ** (bits - 1) - 1
    if axis is None:
        amax = x.detach().abs().max()
    else:
        moved = x.detach().movedim(axis, 0).abs().flatten(1).amax(1)
        shape = [1] * x.dim()
        shape[axis] = -1
        amax = moved.reshape(shape)
    scale = torch.where(amax == 0, torch.ones_like(amax), amax / qmax)
    return _FakeQuant.apply(x, scale, qmax)
