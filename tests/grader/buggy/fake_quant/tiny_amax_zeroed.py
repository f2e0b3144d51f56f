# quizapp: exercise=fake_quant
# expect: fail tiny-amax: "all zeros" "amax is 1e-08" "scale = amax / qmax = 7.87e-11"
"""Deliberately buggy: pytorch-quantization-style: an amax at or below 2**-24 (the smallest float16
subnormal) is treated as zero and its tensor (or channel) quantizes to all zeros."""

import torch


def fake_quantize(x, *, bits=8, axis=None):
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be in 2..16, got {bits}")
    qmax = 2 ** (bits - 1) - 1
    mag = x.detach().abs()
    amax = mag.amax() if axis is None else mag.amax(dim=[d for d in range(x.dim()) if d != axis], keepdim=True)
    epsilon = 1.0 / (1 << 24)
    tiny = amax <= epsilon
    scale = torch.where(tiny, torch.zeros_like(amax), qmax / torch.where(tiny, torch.ones_like(amax), amax))
    q = torch.clamp(torch.round(x.detach() * scale), -qmax, qmax)
    q = q / torch.where(tiny, torch.ones_like(scale), scale)
    return x + (q - x.detach())
