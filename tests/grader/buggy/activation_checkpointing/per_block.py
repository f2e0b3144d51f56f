# quizapp: exercise=activation_checkpointing
# expect: fail segment-boundaries
# expect: fail memory-saved: "KiB" "plain forward"
"""Deliberately buggy: checkpoints every block on its own, whatever segments says."""

from torch.utils.checkpoint import checkpoint


def checkpointed_forward(blocks, x, *, segments):
    if not 1 <= segments <= len(blocks):
        raise ValueError(f"segments must be in 1..{len(blocks)}, got {segments}")
    for block in blocks:
        x = checkpoint(block, x, use_reentrant=False)
    return x
