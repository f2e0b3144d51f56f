# quizapp: exercise=tiled_attention
"""Reference solution: FlashAttention's online softmax over key/value blocks, in float32 (float64 for
float64 inputs), with one rounding to the inputs' dtype at the end."""

import math

import torch


def tiled_attention(q, k, v, *, block_size=64, causal=False) -> torch.Tensor:
    if block_size < 1:
        raise ValueError(f"block_size must be at least 1, got {block_size}")
    n_q, d = q.shape[-2], q.shape[-1]
    n_k = k.shape[-2]
    # Work in float32 whatever the input (float64 stays float64); .to() copies only when it converts,
    # so nothing below may write into these tensors.
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    q_w, k_w, v_w = q.to(work), k.to(work), v.to(work)
    scale = 1.0 / math.sqrt(d)

    batch = q.shape[:-2]
    m = torch.full((*batch, n_q, 1), -math.inf, dtype=work, device=q.device)  # running max per row
    row_sum = torch.zeros((*batch, n_q, 1), dtype=work, device=q.device)  # running sum of exp(s - m)
    acc = torch.zeros((*batch, n_q, v.shape[-1]), dtype=work, device=q.device)  # unnormalised output
    rows = torch.arange(n_q, device=q.device).unsqueeze(-1)

    for start in range(0, n_k, block_size):
        if causal and start > n_q - 1:
            break  # top-left mask: key j >= n_q is seen by no query, nor is any later block
        stop = min(start + block_size, n_k)  # the last block may be shorter
        s = (q_w @ k_w[..., start:stop, :].transpose(-2, -1)) * scale  # (..., n_q, stop - start)
        if causal:
            cols = torch.arange(start, stop, device=q.device)
            s = s.masked_fill(cols > rows, -math.inf)
        # Block 0 holds key 0, which every query sees: from then on m is finite, so a row whose keys in
        # this block are all masked gets alpha = 1 and p = 0, never exp(-inf - (-inf)).
        m_new = torch.maximum(m, s.detach().amax(dim=-1, keepdim=True))  # a shift: no gradient needed
        alpha = torch.exp(m - m_new)  # restates the old terms against the new max (0 at block 0)
        p = torch.exp(s - m_new)
        row_sum = row_sum * alpha + p.sum(dim=-1, keepdim=True)
        acc = acc * alpha + p @ v_w[..., start:stop, :]
        m = m_new

    return (acc / row_sum).to(q.dtype)  # the one division, and the one rounding
