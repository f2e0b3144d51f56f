# quizapp: exercise=activation_checkpointing
"""Does nothing: hands the input back without running a block."""

import torch


def checkpointed_forward(blocks, x, *, segments) -> torch.Tensor:
    return x
