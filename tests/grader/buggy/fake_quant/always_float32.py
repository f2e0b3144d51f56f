# quizapp: exercise=fake_quant
# expect: fail dtype-shape-kept: "expected dtype float64, got float32" ".float()"
"""Deliberately buggy: computes in float32 and returns float32 whatever x's dtype."""

import torch


def fake_quantize(x, *, bits=8, axis=None):
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be in 2..16, got {bits}")
    qmax = 2 ** (bits - 1) - 1
    x = x.float()
    mag = x.detach().abs()
    amax = mag.amax() if axis is None else mag.amax(dim=[d for d in range(x.dim()) if d != axis], keepdim=True)
    scale = torch.where(amax > 0, amax / qmax, torch.ones_like(amax))
    q = torch.clamp(torch.round(x.detach() / scale), -qmax, qmax) * scale
    return x + (q - x.detach())
