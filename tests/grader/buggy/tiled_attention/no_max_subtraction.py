# quizapp: exercise=tiled_attention
# expect: fail large-scores: "overflows"
"""BUGGY (no_max_subtraction): sums exp(s) as it comes, with no max: exact in exact arithmetic, and
inf for scores of 1e4."""

import math

import torch


def tiled_attention(q, k, v, *, block_size=64, causal=False) -> torch.Tensor:
    if block_size < 1:
        raise ValueError(f"block_size must be at least 1, got {block_size}")
    dtype = q.dtype
    work = torch.float64 if dtype == torch.float64 else torch.float32
    q, k, v = q.to(work), k.to(work), v.to(work)
    n_q, n_k = q.shape[-2], k.shape[-2]
    scale = 1 / math.sqrt(q.shape[-1])
    row_sum = torch.zeros((*q.shape[:-1], 1), dtype=work, device=q.device)
    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=work, device=q.device)
    rows = torch.arange(n_q, device=q.device)[:, None]
    for start in range(0, n_k, block_size):
        k_blk = k[..., start:start + block_size, :]
        v_blk = v[..., start:start + block_size, :]
        s = (q @ k_blk.transpose(-2, -1)) * scale
        if causal:
            cols = torch.arange(start, start + k_blk.shape[-2], device=q.device)
            s = s.masked_fill(cols > rows, -math.inf)
        p = torch.exp(s)
        row_sum = row_sum + p.sum(dim=-1, keepdim=True)
        acc = acc + p @ v_blk
    return (acc / row_sum).to(dtype)
