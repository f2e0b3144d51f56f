# quizapp: exercise=activation_checkpointing
# expect: fail segment-boundaries: "blocks 0-2 + blocks 3-4 + blocks 5-6" "blocks 0-1 + blocks 2-3 + blocks 4-6"
"""Deliberately buggy: runs of len(blocks) // segments, the remainder added to the last run (7 into 3: 2+2+3)."""

from torch.utils.checkpoint import checkpoint


def _run(blocks, x):
    for block in blocks:
        x = block(x)
    return x


def checkpointed_forward(blocks, x, *, segments):
    if not 1 <= segments <= len(blocks):
        raise ValueError(f"segments must be in 1..{len(blocks)}, got {segments}")
    size = len(blocks) // segments
    for i in range(segments):
        end = len(blocks) if i == segments - 1 else (i + 1) * size
        x = checkpoint(_run, blocks[i * size:end], x, use_reentrant=False)
    return x
