# quizapp: exercise=fake_quant
# expect: fail straight-through-gradient: "holding amax" "x.detach()"
"""Deliberately buggy: straight-through rounding, but the scale is not detached: gradient leaks through amax."""

import torch


def fake_quantize(x, *, bits=8, axis=None):
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be in 2..16, got {bits}")
    qmax = 2 ** (bits - 1) - 1
    mag = x.abs()
    amax = mag.amax() if axis is None else mag.amax(dim=[d for d in range(x.dim()) if d != axis], keepdim=True)
    scale = torch.where(amax > 0, amax / qmax, torch.ones_like(amax))
    v = x / scale
    rounded = v + (torch.round(v) - v).detach()
    return torch.clamp(rounded, -qmax, qmax) * scale
