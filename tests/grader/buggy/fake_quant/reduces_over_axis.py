# quizapp: exercise=fake_quant
# expect: fail per-channel-matches-torch: "*except* axis"
"""Deliberately buggy: per channel, amax is reduced over the channel axis instead of over the others."""

import torch


def fake_quantize(x, *, bits=8, axis=None):
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be in 2..16, got {bits}")
    qmax = 2 ** (bits - 1) - 1
    mag = x.detach().abs()
    amax = mag.amax() if axis is None else mag.amax(dim=axis, keepdim=True)
    scale = torch.where(amax > 0, amax / qmax, torch.ones_like(amax))
    q = torch.clamp(torch.round(x.detach() / scale), -qmax, qmax) * scale
    return x + (q - x.detach())
