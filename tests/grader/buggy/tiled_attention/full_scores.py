# quizapp: exercise=tiled_attention
# expect: fail memory-bound: "score matrix"
"""BUGGY (full_scores): plain attention, right in every value, but it builds the whole Nq x Nk score
matrix (and for causal a whole Nq x Nk mask), the memory FlashAttention exists to avoid."""

import math

import torch


def tiled_attention(q, k, v, *, block_size=64, causal=False) -> torch.Tensor:
    if block_size < 1:
        raise ValueError("block_size must be at least 1")
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    s = (q.to(work) @ k.to(work).transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=q.device).triu(1), -math.inf)
    return (torch.softmax(s, dim=-1) @ v.to(work)).to(q.dtype)
