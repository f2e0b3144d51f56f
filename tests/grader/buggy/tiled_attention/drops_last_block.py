# quizapp: exercise=tiled_attention
# expect: fail last-block: "the last, shorter block (keys"
# expect: fail causal-tiled gradients
"""BUGGY (drops_last_block): loops over whole blocks only, range(Nk // block_size), so the short last
block is never visited, and with Nk < block_size no block at all."""

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
    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=work, device=q.device)
    row_sum = torch.zeros_like(m)
    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=work, device=q.device)
    rows = torch.arange(n_q, device=q.device)[:, None]
    for index in range(n_k // block_size):
        start = index * block_size
        k_blk = k[..., start:start + block_size, :]
        v_blk = v[..., start:start + block_size, :]
        s = (q @ k_blk.transpose(-2, -1)) * scale
        if causal:
            cols = torch.arange(start, start + k_blk.shape[-2], device=q.device)
            s = s.masked_fill(cols > rows, -math.inf)
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
        alpha = torch.exp(m - m_new)
        p = torch.exp(s - m_new)
        row_sum = row_sum * alpha + p.sum(dim=-1, keepdim=True)
        acc = acc * alpha + p @ v_blk
        m = m_new
    return (acc / row_sum).to(dtype)
