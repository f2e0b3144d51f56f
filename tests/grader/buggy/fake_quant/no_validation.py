# quizapp: exercise=fake_quant
# expect: fail validation
"""Deliberately buggy: bits is never validated."""

import torch


def fake_quantize(x, *, bits=8, axis=None):
    qmax = 2 ** (bits - 1) - 1
    mag = x.detach().abs()
    amax = mag.amax() if axis is None else mag.amax(dim=[d for d in range(x.dim()) if d != axis], keepdim=True)
    scale = torch.where(amax > 0, amax / qmax, torch.ones_like(amax))
    q = torch.clamp(torch.round(x.detach() / scale), -qmax, qmax) * scale
    return x + (q - x.detach())
