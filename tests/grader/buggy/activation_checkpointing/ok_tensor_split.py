# quizapp: exercise=activation_checkpointing
# expect: pass
"""Deliberately buggy: NOT a bug: run boundaries from tensor_split, a closure per run."""

import torch
import torch.utils.checkpoint


def checkpointed_forward(blocks, x, *, segments):
    if segments < 1 or segments > len(blocks):
        raise ValueError(f"need 1 <= segments <= {len(blocks)}; got segments={segments}")
    for part in torch.arange(len(blocks)).tensor_split(segments):
        run = [blocks[int(i)] for i in part]

        def forward(t, run=run):
            for block in run:
                t = block(t)
            return t

        x = torch.utils.checkpoint.checkpoint(forward, x, use_reentrant=False)
    return x
