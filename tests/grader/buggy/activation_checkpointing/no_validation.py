# quizapp: exercise=activation_checkpointing
# expect: fail validation
"""Deliberately buggy: segments is never validated."""

from torch.utils.checkpoint import checkpoint


def _run(blocks, x):
    for block in blocks:
        x = block(x)
    return x


def checkpointed_forward(blocks, x, *, segments):
    base, extra = divmod(len(blocks), max(segments, 1))
    start = 0
    for i in range(max(segments, 1)):
        length = base + (1 if i < extra else 0)
        if length:
            x = checkpoint(_run, blocks[start:start + length], x, use_reentrant=False)
        start += length
    return x
