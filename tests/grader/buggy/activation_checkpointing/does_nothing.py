# quizapp: exercise=activation_checkpointing
# expect: fail output-and-gradients segment-boundaries use-reentrant-false recompute-once validation
# expect: skip memory-saved
"""Does nothing: hands the input back without running a block."""

import torch


def checkpointed_forward(blocks, x, *, segments) -> torch.Tensor:
    return x
