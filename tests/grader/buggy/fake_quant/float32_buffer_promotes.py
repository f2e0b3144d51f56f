# quizapp: exercise=fake_quant
# expect: fail dtype-shape-kept: "expected dtype bfloat16, got float32" "torch.zeros(...)" ".to(x.dtype)"
# expect: lacks dtype-shape-kept: "(no .float())"
"""Deliberately buggy: GPTQ-style, amax is taken against a float32 torch.zeros(...) buffer (so the range
always holds 0), which promotes a bfloat16 x to float32; nothing calls .float()."""

import torch


def fake_quantize(x, *, bits=8, axis=None):
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be in 2..16, got {bits}")
    qmax = 2 ** (bits - 1) - 1
    dims = list(range(x.dim())) if axis is None else [d for d in range(x.dim()) if d != axis]
    mag = x.detach().abs().amax(dim=dims, keepdim=True)
    tmp = torch.zeros(mag.shape, device=x.device)
    amax = torch.maximum(mag, tmp)
    scale = torch.where(amax > 0, amax / qmax, torch.ones_like(amax))
    q = torch.clamp(torch.round(x.detach() / scale), -qmax, qmax) * scale
    return x + (q - x.detach())
