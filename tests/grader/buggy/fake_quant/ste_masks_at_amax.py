# quizapp: exercise=fake_quant
# expect: fail straight-through-gradient: "exactly 0 at the 1 position where |x| reaches amax" "masks the gradient"
# expect: says straight-through-gradient: "clipped STE"
# expect: lacks straight-through-gradient: "x.detach()"
"""Deliberately buggy: a clipped straight-through estimator whose backward keeps the gradient only
strictly inside (-amax, amax), so the element holding amax gets none (the forward is right)."""

import torch


class _ClippedSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmax, clip):
        ctx.save_for_backward(x, clip)
        return torch.clamp(torch.round(x / scale), -qmax, qmax) * scale

    @staticmethod
    def backward(ctx, grad):
        x, clip = ctx.saved_tensors
        return grad * (x.abs() < clip), None, None, None


def fake_quantize(x, *, bits=8, axis=None):
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be in 2..16, got {bits}")
    qmax = 2 ** (bits - 1) - 1
    mag = x.detach().abs()
    amax = mag.amax() if axis is None else mag.amax(dim=[d for d in range(x.dim()) if d != axis], keepdim=True)
    scale = torch.where(amax > 0, amax / qmax, torch.ones_like(amax))
    return _ClippedSTE.apply(x, scale, qmax, amax)
