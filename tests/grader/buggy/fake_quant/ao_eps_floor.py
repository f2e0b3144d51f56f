# quizapp: exercise=fake_quant
# expect: fail tiny-amax: "amax 1e-06" "matches scale = max(amax / qmax, 1.19e-07)" "the floor torch.ao"
"""Deliberately buggy: torch.ao-style minimum scale: scale = max(amax / qmax, float32 eps), so a tensor
with amax 1e-6 gets a step 15 times too coarse."""

import torch


def fake_quantize(x, *, bits=8, axis=None):
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be in 2..16, got {bits}")
    qmax = 2 ** (bits - 1) - 1
    mag = x.detach().abs()
    amax = mag.amax() if axis is None else mag.amax(dim=[d for d in range(x.dim()) if d != axis], keepdim=True)
    scale = torch.clamp(amax / qmax, min=torch.finfo(torch.float32).eps)
    q = torch.clamp(torch.round(x.detach() / scale), -qmax, qmax) * scale
    return x + (q - x.detach())
