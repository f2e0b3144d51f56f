# quizapp: exercise=tiled_attention
# expect: fail matches-sdpa last-block causal-top-left causal-tiled precision large-scores any-strides gradients
# expect: fail rejects-bad-block-size
# expect: skip memory-bound no-attention-kernel inputs-untouched
"""Does nothing: returns zeros of the right shape and dtype without reading q, k or v."""

import torch


def tiled_attention(q, k, v, *, block_size=64, causal=False) -> torch.Tensor:
    return torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
