# quizapp: exercise=fake_quant
# expect: fail per-channel-matches-torch validation
# expect: fail per-tensor-matches-torch: "2**bits - 1"
# expect: may-not-pass all-zero
# expect: may-not-pass round-half-even: "scale is wrong, not the rounding" "amax / 255"
"""Deliberately buggy: unsigned level count: qmax = 2**bits - 1."""

import torch


def fake_quantize(x, *, bits=8, axis=None):
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be in 2..16, got {bits}")
    qmax = 2 ** bits - 1
    mag = x.detach().abs()
    amax = mag.amax() if axis is None else mag.amax(dim=[d for d in range(x.dim()) if d != axis], keepdim=True)
    scale = torch.where(amax > 0, amax / qmax, torch.ones_like(amax))
    q = torch.clamp(torch.round(x.detach() / scale), -qmax, qmax) * scale
    return x + (q - x.detach())
