# quizapp: exercise=activation_checkpointing
# expect: fail use-reentrant-false recompute-once
# expect: fail output-and-gradients: "use_reentrant=False" "no gradient"
"""Deliberately buggy: the reentrant checkpoint: parameters get no gradient when the input does not require grad."""

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
        x = checkpoint(_run, blocks[start:start + length], x, use_reentrant=True)
        start += length
    return x
