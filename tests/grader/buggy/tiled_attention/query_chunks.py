# quizapp: exercise=tiled_attention
# expect: fail memory-bound: "queries against all"
"""BUGGY (query_chunks): chunked attention: queries in blocks of block_size, each against all Nk keys
with an exact softmax over whole rows. Right values, but a (block_size x Nk) tile per (B, H)."""

import math

import torch


def tiled_attention(q, k, v, *, block_size=64, causal=False) -> torch.Tensor:
    if block_size < 1:
        raise ValueError("block_size must be at least 1")
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    k_t, v_w = k.to(work).transpose(-2, -1), v.to(work)
    cols = torch.arange(k.shape[-2], device=q.device)
    outs = []
    for start in range(0, q.shape[-2], block_size):
        q_blk = q[..., start:start + block_size, :].to(work)
        s = (q_blk @ k_t) / math.sqrt(q.shape[-1])
        if causal:
            rows = torch.arange(start, start + q_blk.shape[-2], device=q.device)[:, None]
            s = s.masked_fill(cols > rows, -math.inf)
        outs.append(torch.softmax(s, dim=-1) @ v_w)
    return torch.cat(outs, dim=-2).to(q.dtype)
