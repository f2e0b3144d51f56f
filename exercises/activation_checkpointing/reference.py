# quizapp: exercise=activation_checkpointing
"""Reference solution: split the blocks into nearly equal runs and checkpoint each run."""

import torch
from torch.utils.checkpoint import checkpoint


def _run(blocks, x):
    for block in blocks:
        x = block(x)
    return x


def checkpointed_forward(blocks, x, *, segments) -> torch.Tensor:
    if not 1 <= segments <= len(blocks):
        raise ValueError(f"segments must be in 1..{len(blocks)} (the number of blocks), got {segments}")
    base, extra = divmod(len(blocks), segments)
    start = 0
    for i in range(segments):
        length = base + (1 if i < extra else 0)  # the first `extra` runs take one block more
        # Non-reentrant: works when x does not require grad, supports keyword args and nesting,
        # and is what PyTorch recommends; the RNG state is saved so dropout recomputes the same mask.
        x = checkpoint(_run, blocks[start:start + length], x, use_reentrant=False)
        start += length
    return x
