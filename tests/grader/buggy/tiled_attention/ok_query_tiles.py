# quizapp: exercise=tiled_attention
# expect: pass
"""A correct solution written another way: FlashAttention-2's loop order. Queries in tiles of their own
size (12 rows, whatever block_size is), key blocks inside, blocks wholly above the diagonal skipped,
the running statistics updated in place, and each tile's rows gathered at the end."""

import math

import torch

QUERY_TILE = 12


def tiled_attention(q, k, v, *, block_size=64, causal=False) -> torch.Tensor:
    if block_size < 1:
        raise ValueError(f"block_size must be at least 1, got {block_size}")
    wide = torch.promote_types(q.dtype, torch.float32)  # float64 stays, the rest become float32
    n_q, n_k, d = q.shape[-2], k.shape[-2], q.shape[-1]
    tiles = []
    for q0 in range(0, n_q, QUERY_TILE):
        q_t = q[..., q0:q0 + QUERY_TILE, :].to(wide) / math.sqrt(d)  # out of place: the caller's q stays
        rows = torch.arange(q0, q0 + q_t.shape[-2], device=q.device).unsqueeze(-1)
        m = q_t.new_full((*q_t.shape[:-1], 1), -math.inf)
        row_sum = q_t.new_zeros((*q_t.shape[:-1], 1))
        acc = q_t.new_zeros((*q_t.shape[:-1], v.shape[-1]))
        last_row = q0 + q_t.shape[-2] - 1
        for k0 in range(0, n_k, block_size):
            if causal and k0 > last_row:
                break  # every row of this tile is before every key from here on
            k_b = k[..., k0:k0 + block_size, :].to(wide)
            s = torch.einsum("...id,...jd->...ij", q_t, k_b)
            if causal:
                cols = torch.arange(k0, k0 + k_b.shape[-2], device=q.device)
                s = torch.where(cols <= rows, s, -math.inf)
            m_new = torch.maximum(m, s.amax(-1, keepdim=True)).detach()
            alpha = (m - m_new).exp()
            p = (s - m_new).exp()
            row_sum = row_sum.mul(alpha).add(p.sum(-1, keepdim=True))
            acc = acc.mul_(alpha).add_(p @ v[..., k0:k0 + block_size, :].to(wide))
            m = m_new
        tiles.append(acc / row_sum)
    return torch.cat(tiles, dim=-2).to(q.dtype)
