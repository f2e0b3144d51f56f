# quizapp: exercise=tiled_attention
# expect: pass
"""A correct solution written another way: FlashAttention-1's combination (each block's exponentials
against its own max, then merged with the running statistics), with the guard that makes a wholly
masked block harmless: its max is replaced by 0 before exponentiating, so its terms are exp(-inf) = 0
and its weight exp(-inf - m) = 0. Works on (B*H, N, D) tensors made with reshape."""

import math

import torch


def tiled_attention(q, k, v, *, block_size=64, causal=False) -> torch.Tensor:
    if block_size < 1:
        raise ValueError(f"block_size must be at least 1, got {block_size}")
    out_dtype = q.dtype
    up = torch.float64 if out_dtype == torch.float64 else torch.float32
    *batch, n_q, d = q.shape
    n_k, d_v = k.shape[-2], v.shape[-1]
    q3 = q.reshape(-1, n_q, d).to(up)
    k3 = k.reshape(-1, n_k, d).to(up)
    v3 = v.reshape(-1, n_k, d_v).to(up)
    scale = d ** -0.5
    m = torch.full((q3.shape[0], n_q, 1), -math.inf, dtype=up, device=q.device)
    row_sum = torch.zeros_like(m)
    o = torch.zeros(q3.shape[0], n_q, d_v, dtype=up, device=q.device)
    i = torch.arange(n_q, device=q.device).view(-1, 1)
    for j0 in range(0, n_k, block_size):
        kb, vb = k3[:, j0:j0 + block_size], v3[:, j0:j0 + block_size]
        s = torch.bmm(q3, kb.transpose(1, 2)) * scale
        if causal:
            j = torch.arange(j0, j0 + kb.shape[1], device=q.device).view(1, -1)
            s = s.masked_fill(j > i, -math.inf)
        m_blk = s.amax(-1, keepdim=True)
        m_blk = torch.where(torch.isinf(m_blk), torch.zeros_like(m_blk), m_blk)
        p = torch.exp(s - m_blk)
        m_new = torch.maximum(m, m_blk)
        row_sum = torch.exp(m - m_new) * row_sum + torch.exp(m_blk - m_new) * p.sum(-1, keepdim=True)
        o = torch.exp(m - m_new) * o + torch.exp(m_blk - m_new) * torch.bmm(p, vb)
        m = m_new
    return (o / row_sum).reshape(*batch, n_q, d_v).to(out_dtype)
