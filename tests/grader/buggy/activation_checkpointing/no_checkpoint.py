# quizapp: exercise=activation_checkpointing
"""Deliberately buggy: a plain forward: nothing is checkpointed."""

def checkpointed_forward(blocks, x, *, segments):
    if not 1 <= segments <= len(blocks):
        raise ValueError(f"segments must be in 1..{len(blocks)}, got {segments}")
    for block in blocks:
        x = block(x)
    return x
