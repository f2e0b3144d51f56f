# quizapp: exercise=activation_checkpointing
# expect: fail output-and-gradients: "preserve_rng_state"
"""Deliberately buggy: preserve_rng_state=False: the recomputed dropout masks differ from the forward's."""

from torch.utils.checkpoint import checkpoint


def _run(blocks, x):
    for block in blocks:
        x = block(x)
    return x


def checkpointed_forward(blocks, x, *, segments):
    if not 1 <= segments <= len(blocks):
        raise ValueError(f"segments must be in 1..{len(blocks)}, got {segments}")
    base, extra = divmod(len(blocks), segments)
    start = 0
    for i in range(segments):
        length = base + (1 if i < extra else 0)
        x = checkpoint(_run, blocks[start:start + length], x, use_reentrant=False, preserve_rng_state=False)
        start += length
    return x
