# quizapp: exercise=tiled_attention
"""Attention computed one key block at a time (FlashAttention's online softmax).
Grade it with: quizapp grade tiled_attention.py"""

import math

import torch


def tiled_attention(q, k, v, *, block_size=64, causal=False) -> torch.Tensor:
    """softmax(q @ k^T / sqrt(D)) @ v, equal to F.scaled_dot_product_attention(q, k, v, is_causal=causal),
    without ever holding a full Nq x Nk score matrix.

    q (B, H, Nq, D), k (B, H, Nk, D), v (B, H, Nk, Dv), any strides, all of one dtype (float64, float32,
    bfloat16 or float16). Returns (B, H, Nq, Dv) in that dtype.

    - Keys and values are visited in blocks of block_size along Nk (the last block shorter when Nk is
      not a multiple). Per query row keep a running max m (from -inf), a running sum l of exp(s - m)
      and an output accumulator; when a block raises the max, multiply l and the accumulator by
      exp(m_old - m_new) before adding the block's terms; divide once, after the last block.
    - causal=True is SDPA's is_causal: top-left, query i sees keys j <= i, whatever Nq and Nk.
    - Arithmetic in float32 (float64 for float64 inputs); bfloat16/float16 inputs are upcast and only
      the result is rounded back, once.
    - No tensor an op returns during the call holds more than
      B*H*max(Nq*block_size, (max(Nq, Nk) + block_size)*max(D, Dv)) elements; no torch attention kernel
      (SDPA, flash or memory-efficient attention) runs.
    - Gradients come from autograd through your own ops. q, k and v are not modified.
    - ValueError when block_size < 1.
    """
    # TODO: raise ValueError for block_size < 1
    # TODO: upcast q, k, v (float32, or float64 for float64 inputs) without writing into them
    # TODO: m = -inf, l = 0, acc = 0 per query row; scale = 1 / sqrt(D)
    # TODO: for each key block: scores, causal mask, new max, rescale l and acc, add the block's terms
    # TODO: return (acc / l) cast back to q.dtype
    raise NotImplementedError("tiled_attention is not written yet: see the TODOs in this file")
