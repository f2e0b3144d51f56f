# quizapp: exercise=fake_quant
"""Does nothing: hands the input back unquantized."""

import torch


def fake_quantize(x, *, bits=8, axis=None) -> torch.Tensor:
    return x
