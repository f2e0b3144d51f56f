# quizapp: exercise=fake_quant
# expect: fail per-tensor-matches-torch per-channel-matches-torch validation
# expect: fail round-half-even: "scale is wrong, not the rounding" "-3.5 -> -3.98431"
# expect: says round-half-even: "multiples of 0.996078 = amax / 127.5"
# expect: lacks round-half-even: "floor("
"""Deliberately buggy: the scale counts (2**bits - 1) / 2 = 127.5 levels, as Distiller's unrestricted
symmetric range does, so scale = amax / 127.5 instead of amax / 127 (and the clamp allows -128)."""

import torch


def fake_quantize(x, *, bits=8, axis=None):
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be in 2..16, got {bits}")
    n = (2 ** bits - 1) / 2
    mag = x.detach().abs()
    amax = mag.amax() if axis is None else mag.amax(dim=[d for d in range(x.dim()) if d != axis], keepdim=True)
    scale = torch.where(amax > 0, amax / n, torch.ones_like(amax))
    q = torch.clamp(torch.round(x.detach() / scale), -(2 ** (bits - 1)), 2 ** (bits - 1) - 1) * scale
    return x + (q - x.detach())
