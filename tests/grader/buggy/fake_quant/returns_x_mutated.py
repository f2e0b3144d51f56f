# quizapp: exercise=fake_quant
# expect: fail straight-through-gradient: "the output is x itself" "no straight-through estimator was exercised"
# expect: fail x-unchanged: "the result is x itself, quantized in place" "x changed in"
"""Deliberately buggy: SmoothQuant-style, quantizes x in place under no_grad and returns x itself."""

import torch


@torch.no_grad()
def fake_quantize(x, *, bits=8, axis=None):
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be in 2..16, got {bits}")
    qmax = 2 ** (bits - 1) - 1
    amax = x.abs().amax() if axis is None else x.abs().amax(dim=[d for d in range(x.dim()) if d != axis], keepdim=True)
    scales = torch.where(amax > 0, amax / qmax, torch.ones_like(amax))
    x.div_(scales).round_().clamp_(-qmax, qmax).mul_(scales)
    return x
