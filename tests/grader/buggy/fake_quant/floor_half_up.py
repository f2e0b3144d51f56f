# quizapp: exercise=fake_quant
# expect: fail round-half-even: "0.5 -> expected 0, got 1" "floor(x / scale + 0.5)"
"""Deliberately buggy: ties rounded up with floor(v + 0.5) instead of half to even."""

import torch


def fake_quantize(x, *, bits=8, axis=None):
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be in 2..16, got {bits}")
    qmax = 2 ** (bits - 1) - 1
    mag = x.detach().abs()
    amax = mag.amax() if axis is None else mag.amax(dim=[d for d in range(x.dim()) if d != axis], keepdim=True)
    scale = torch.where(amax > 0, amax / qmax, torch.ones_like(amax))
    q = torch.clamp(torch.floor(x.detach() / scale + 0.5), -qmax, qmax) * scale
    return x + (q - x.detach())
