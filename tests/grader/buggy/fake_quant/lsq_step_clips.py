# quizapp: exercise=fake_quant
# expect: fail per-tensor-matches-torch per-channel-matches-torch round-half-even validation
# expect: fail straight-through-gradient: "exactly 0 at" "masks the gradient" "clipped STE"
# expect: lacks round-half-even: "floor("
# expect: lacks straight-through-gradient: "x.detach()"
"""Deliberately buggy: LSQ-style: the step is LSQ's initial value 2 * mean(|x|) / sqrt(qmax) instead of
amax / qmax, and the gradient reaches x only through the clamp, so values beyond qmax * step get none."""

import torch


def fake_quantize(x, *, bits=8, axis=None):
    if not 2 <= bits <= 16:
        raise ValueError(f"bits must be in 2..16, got {bits}")
    qmax = 2 ** (bits - 1) - 1
    mag = x.detach().abs()
    mean = mag.mean() if axis is None else mag.mean(dim=[d for d in range(x.dim()) if d != axis], keepdim=True)
    step = torch.where(mean > 0, 2 * mean / qmax ** 0.5, torch.ones_like(mean))
    v = torch.clamp(x / step, -qmax, qmax)
    v = v + (torch.round(v) - v).detach()
    return v * step
