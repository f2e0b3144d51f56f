# quizapp: exercise=fake_quant
"""Reference solution: symmetric fake quantization with a straight-through gradient."""

import torch


def fake_quantize(x, *, bits=8, axis=None) -> torch.Tensor:
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be in 2..16, got {bits}")
    qmax = 2 ** (bits - 1) - 1
    # The scale is a constant for the gradient: computed from a detached x.
    magnitude = x.detach().abs()
    if axis is None:
        amax = magnitude.amax()
    else:
        others = [d for d in range(x.dim()) if d != axis % x.dim()]
        amax = magnitude.amax(dim=others, keepdim=True)  # keepdim: broadcasts against x
    # An all-zero tensor (or channel) has amax 0; scale 1 keeps it zero instead of 0/0 = NaN.
    scale = torch.where(amax > 0, amax / qmax, torch.ones_like(amax))
    # torch.round rounds half to even, as torch's fake_quantize kernels do.
    quantized = torch.clamp(torch.round(x.detach() / scale), -qmax, qmax) * scale
    # Straight-through: the forward value is the quantized one, the gradient is the identity's.
    return x + (quantized - x.detach())
