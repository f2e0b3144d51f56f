# quizapp: exercise=activation_checkpointing
# expect: fail segment-boundaries memory-saved recompute-once
# expect: fail use-reentrant-false: "no torch.utils.checkpoint.checkpoint call"
"""Deliberately buggy: a plain forward: nothing is checkpointed."""

def checkpointed_forward(blocks, x, *, segments):
    if not 1 <= segments <= len(blocks):
        raise ValueError(f"segments must be in 1..{len(blocks)}, got {segments}")
    for block in blocks:
        x = block(x)
    return x
