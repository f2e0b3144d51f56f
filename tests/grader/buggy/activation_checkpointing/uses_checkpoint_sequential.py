# quizapp: exercise=activation_checkpointing
# expect: fail memory-saved
# expect: fail segment-boundaries: "outside any checkpoint region"
# expect: fail recompute-once: "never recomputed"
"""Deliberately buggy: checkpoint_sequential: other boundaries, and its last run is not checkpointed."""

from torch.utils.checkpoint import checkpoint_sequential


def checkpointed_forward(blocks, x, *, segments):
    if not 1 <= segments <= len(blocks):
        raise ValueError(f"segments must be in 1..{len(blocks)}, got {segments}")
    return checkpoint_sequential(blocks, segments, x, use_reentrant=False)
