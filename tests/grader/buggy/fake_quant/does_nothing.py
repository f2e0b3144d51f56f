# quizapp: exercise=fake_quant
# expect: fail per-tensor-matches-torch per-channel-matches-torch round-half-even straight-through-gradient x-unchanged
# expect: fail validation
# expect: skip all-zero tiny-amax dtype-shape-kept
"""Does nothing: hands the input back unquantized."""

import torch


def fake_quantize(x, *, bits=8, axis=None) -> torch.Tensor:
    return x
