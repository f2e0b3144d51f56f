# quizapp: exercise=tiled_attention
# expect: fail no-attention-kernel: "scaled_dot_product_attention"
"""BUGGY (calls_sdpa): upcasts and hands the work to F.scaled_dot_product_attention, then rounds back."""

import torch
import torch.nn.functional as F


def tiled_attention(q, k, v, *, block_size=64, causal=False) -> torch.Tensor:
    if block_size < 1:
        raise ValueError("block_size must be at least 1")
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    out = F.scaled_dot_product_attention(q.to(work), k.to(work), v.to(work), is_causal=causal)
    return out.to(q.dtype)
