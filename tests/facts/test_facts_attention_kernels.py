"""Facts taught by questions/attention-kernels.yaml, checked with torch on the CPU.

Each verified single or multi question's test settles every choice (`# choice N` beside the
assertion, N its index in the file) and then checks that the file's key is exactly the set found
true; numeric questions compute their value and check that the file's key and tolerance take it.
The online softmax is run on small float64 tensors and compared with `F.scaled_dot_product_attention`
and with a plain softmax.

What rests on sources rather than on torch (CPU torch cannot run the CUDA kernels):
attn-flash-saved-for-backward's claims that FlashAttention stores neither P nor S nor the dropout mask
(choices 2, 3 and 4; Dao et al. 2022, Dao 2023 Algorithm 2); the test shows that the saved output and
logsumexp suffice to rebuild P and every gradient, that torch's own CPU flash kernel saves only
q, k, v, the output and the logsumexp, and that a dropout mask is replayed from the generator
state. Not verified, and why: attn-io-awareness and attn-fa2-fa3 rest on the three FlashAttention
papers (Dao et al. 2022; Dao 2023; Shah et al. 2024), attn-fa3-hopper on the last
two; attn-sdpa-fp32-backend and attn-sdpa-flash-ruled-out on torch's CUDA backend selection
(`aten/src/ATen/native/transformers/cuda/sdp_utils.cpp` in a recent main, the default priority
order read from `torch._C._get_sdp_priority_order()` in torch 2.13, and the
`scaled_dot_product_attention` documentation), which only a GPU could show.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from bankkeys import accepts, right_choices, topic_questions
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.bias import causal_lower_right

TOPIC = "attention-kernels"
INF = float("inf")


def _right(qid: str) -> set[int]:
    return right_choices(TOPIC, qid)


def online_attention(q, k, v, block, *, mask=None, guard=True):
    """FlashAttention's online softmax over key blocks. q (..., Nq, D), k (..., Nk, D), v (..., Nk, Dv);
    mask (Nq, Nk) bool, True = attend. Returns (output, logsumexp per row)."""
    scale = 1 / math.sqrt(q.shape[-1])
    m = q.new_full((*q.shape[:-1], 1), -INF)
    lsum = q.new_zeros((*q.shape[:-1], 1))
    o = q.new_zeros((*q.shape[:-1], v.shape[-1]))
    for start in range(0, k.shape[-2], block):
        kb, vb = k[..., start:start + block, :], v[..., start:start + block, :]
        s = q @ kb.transpose(-2, -1) * scale
        if mask is not None:
            s = s.masked_fill(~mask[:, start:start + block], -INF)
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        ref = torch.where(torch.isinf(m_new), 0.0, m_new) if guard else m_new
        alpha = torch.exp(m - ref)
        p = torch.exp(s - ref)
        lsum = alpha * lsum + p.sum(-1, keepdim=True)
        o = alpha * o + p @ vb
        m = m_new
    return o / lsum, m + torch.log(lsum)


def _qkv(b=2, h=3, nq=7, nk=11, d=8, dv=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    mk = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64)
    return mk(b, h, nq, d), mk(b, h, nk, d), mk(b, h, nk, dv)


@pytest.mark.verifies("attn-online-softmax")
def test_online_softmax_equals_softmax_for_any_block_size():
    q, k, v = _qkv()  # Dv = 5 differs from D = 8; Nk = 11 is no multiple of most blocks
    ref = F.scaled_dot_product_attention(q, k, v)
    scores = q @ k.transpose(-2, -1) / math.sqrt(8)  # the scale uses D, not Dv
    manual = torch.softmax(scores, -1) @ v
    with sdpa_kernel([SDPBackend.MATH]):  # the math backend is the plain formula
        assert torch.allclose(F.scaled_dot_product_attention(q, k, v), manual, rtol=1e-12, atol=1e-12)
    for block in (1, 2, 3, 4, 5, 11, 16):  # a short last block, and one block longer than Nk
        out, lse = online_attention(q, k, v, block)
        assert torch.allclose(out, ref, rtol=1e-12, atol=1e-12), block
        assert torch.allclose(lse.squeeze(-1), torch.logsumexp(scores, -1), rtol=1e-12, atol=1e-12)
    # query rows are independent: tiling the queries too changes nothing
    tiled = torch.cat([online_attention(q[..., i:i + 3, :], k, v, 4)[0] for i in range(0, 7, 3)], dim=-2)
    assert torch.allclose(tiled, ref, rtol=1e-12, atol=1e-12)
    # why the max is subtracted: exp overflows without it
    assert torch.isinf(torch.exp(torch.tensor(100.0))) and torch.isfinite(torch.exp(torch.tensor(88.0)))
    assert torch.isinf(torch.exp(torch.tensor(12.0, dtype=torch.float16)))
    assert torch.isfinite(torch.exp(torch.tensor(11.0, dtype=torch.float16)))
    big = 1e4 * torch.randn(2, 1, 5, 4, dtype=torch.float64)
    out, _ = online_attention(big, big, v[:, :1, :5], 2)
    assert torch.isfinite(out).all()
    assert torch.allclose(out, F.scaled_dot_product_attention(big, big, v[:, :1, :5]), rtol=1e-10, atol=1e-10)


def _online_on_scores(scores, v, block, variant):
    """Online softmax over given scores (rows, N) with one of the rescaling rules of the question."""
    s0, v0 = scores[:, :block], v[:block]
    m = s0.amax(-1, keepdim=True)
    p = torch.exp(s0 - m)
    lsum, o = p.sum(-1, keepdim=True), p @ v0
    for start in range(block, scores.shape[-1], block):
        s, vb = scores[:, start:start + block], v[start:start + block]
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        p = torch.exp(s - m_new)
        down = torch.exp(m - m_new)
        if variant == 0:  # only l rescaled
            lsum, o = down * lsum, o
        elif variant == 1:  # the inverse factor
            lsum, o = lsum / down, o / down
        elif variant == 2:  # both rescaled by exp(m - m_new)
            lsum, o = down * lsum, down * o
        lsum, o = lsum + p.sum(-1, keepdim=True), o + p @ vb  # variant 3: nothing rescaled
        m = m_new
    return o / lsum


@pytest.mark.verifies("attn-online-softmax-rescale")
def test_both_sum_and_output_are_rescaled_by_exp_of_old_minus_new_max():
    g = torch.Generator().manual_seed(1)
    scores = torch.randn(4, 12, generator=g, dtype=torch.float64) + torch.linspace(0, 6, 12, dtype=torch.float64)
    v = torch.randn(12, 3, generator=g, dtype=torch.float64)
    ref = torch.softmax(scores, -1) @ v
    block = 4
    # the max does grow from block to block in these rows
    assert (scores[:, 4:8].amax(-1) > scores[:, :4].amax(-1)).all()
    assert torch.allclose(_online_on_scores(scores, v, block, 2), ref, rtol=1e-12, atol=1e-12)  # choice 2
    for variant in (0, 1, 3):  # choices 0, 1 and 3: wrong
        assert (_online_on_scores(scores, v, block, variant) - ref).abs().max() > 1e-2, variant
    # without a growing max, skipping the rescale would be harmless (the factor is 1)
    flat = scores.clone()
    flat[:, 0] = 20.0  # the first block holds every row's max
    assert (flat[:, :4].amax(-1) >= flat.amax(-1)).all()
    assert torch.allclose(_online_on_scores(flat, v, block, 3), torch.softmax(flat, -1) @ v, rtol=1e-12)
    assert _right("attn-online-softmax-rescale") == {2}


@pytest.mark.verifies("attn-online-softmax-running-sum")
def test_running_sum_after_two_blocks():
    blocks = [torch.tensor([1.0, 2.0], dtype=torch.float64), torch.tensor([4.0, 0.0], dtype=torch.float64)]
    m, lsum = torch.tensor(-INF, dtype=torch.float64), torch.tensor(0.0, dtype=torch.float64)
    for s in blocks:
        m_new = torch.maximum(m, s.max())
        lsum = torch.exp(m - m_new) * lsum + torch.exp(s - m_new).sum()
        m = m_new
    value = lsum.item()
    assert value == pytest.approx(torch.exp(torch.cat(blocks) - 4).sum().item(), rel=1e-12)
    assert value == pytest.approx(1.203438, abs=1e-6)
    assert accepts(TOPIC, "attn-online-softmax-running-sum", f"{value:.4f}")
    no_rescale = (math.exp(-1) + 1) + (1 + math.exp(-4))
    assert not accepts(TOPIC, "attn-online-softmax-running-sum", f"{no_rescale:.4f}")  # 2.3862
    assert 1 / value == pytest.approx(0.831, abs=5e-4)


@pytest.mark.verifies("attn-flash-saved-for-backward")
def test_output_and_logsumexp_suffice_for_every_gradient():
    q, k, v = (t.requires_grad_() for t in _qkv(nq=9, nk=9, d=4, dv=4, seed=2))
    scale = 1 / math.sqrt(4)
    out = F.scaled_dot_product_attention(q, k, v)
    d_out = torch.randn_like(out)
    out.backward(d_out)
    with torch.no_grad():
        lse = torch.logsumexp(q @ k.transpose(-2, -1) * scale, -1, keepdim=True)  # one number per row
        D = (d_out * out).sum(-1, keepdim=True)  # choice 0: the saved output is needed here
        dq = torch.zeros_like(q)
        dks, dvs = [], []
        for start in range(0, 9, 4):  # key blocks: no N x N tensor is ever formed
            kb, vb = k[..., start:start + 4, :], v[..., start:start + 4, :]
            p = torch.exp(q @ kb.transpose(-2, -1) * scale - lse)  # choice 1: P rebuilt from the logsumexp
            assert torch.allclose(p, torch.softmax(q @ k.transpose(-2, -1) * scale, -1)[..., start:start + 4])
            dvs.append(p.transpose(-2, -1) @ d_out)
            dp = d_out @ vb.transpose(-2, -1)
            ds = p * (dp - D)
            dq += ds @ kb * scale
            dks.append(ds.transpose(-2, -1) @ q * scale)
    # choices 2 and 4: neither P nor S had to be kept; the gradients match autograd's
    assert torch.allclose(dq, q.grad, rtol=1e-10, atol=1e-12)
    assert torch.allclose(torch.cat(dks, -2), k.grad, rtol=1e-10, atol=1e-12)
    assert torch.allclose(torch.cat(dvs, -2), v.grad, rtol=1e-10, atol=1e-12)
    # torch's own CPU flash kernel follows the same design: besides q, k and v, its backward node
    # saves the output and one logsumexp per row, and no N x N tensor
    qc, kc, vc = (t.detach().float().requires_grad_() for t in (q, k, v))
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        node = F.scaled_dot_product_attention(qc, kc, vc).grad_fn
    saved = {name: getattr(node, name) for name in dir(node) if name.startswith("_saved_")}
    tensors = {name: t.shape for name, t in saved.items() if isinstance(t, torch.Tensor)}
    assert tensors == {"_saved_query": qc.shape, "_saved_key": kc.shape, "_saved_value": vc.shape,
                       "_saved_output": qc.shape, "_saved_logsumexp": qc.shape[:-1]}
    # choice 3: a dropout mask is replayed from the generator state instead of being stored
    gen = torch.Generator().manual_seed(1234)
    state = gen.get_state()
    first = torch.rand(9, 9, generator=gen) > 0.1
    gen.set_state(state)
    assert torch.equal(first, torch.rand(9, 9, generator=gen) > 0.1)
    assert _right("attn-flash-saved-for-backward") == {0, 1}


@pytest.mark.verifies("attn-causal-top-left")
def test_is_causal_is_top_left_aligned_when_lq_differs_from_lk():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(1, 2, 5, 8, generator=g, dtype=torch.float64)  # five tokens' keys/queries
    q, k, v = x[..., 3:, :], x, torch.randn(1, 2, 5, 4, generator=g, dtype=torch.float64)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # choice 3: no error
    last_row = out[..., 1, :]
    only_0_1 = F.scaled_dot_product_attention(q[..., 1:, :], k[..., :2, :], v[..., :2, :])[..., 0, :]
    assert torch.allclose(last_row, only_0_1, rtol=1e-12)  # choice 1: keys 0 and 1 only
    assert torch.allclose(out, F.scaled_dot_product_attention(
        q, k, v, attn_mask=torch.ones(2, 5, dtype=torch.bool).tril(0)), rtol=1e-12)
    all_keys = F.scaled_dot_product_attention(q[..., 1:, :], k, v)[..., 0, :]
    assert (last_row - all_keys).abs().max() > 1e-3  # choice 0: not keys 0 to 4
    new_only = F.scaled_dot_product_attention(q[..., 1:, :], k[..., 3:, :], v[..., 3:, :])[..., 0, :]
    assert (last_row - new_only).abs().max() > 1e-3  # choice 2: not keys 3 and 4
    # square case: top-left and bottom-right are the same mask
    assert torch.equal(torch.ones(5, 5).tril(0), torch.ones(5, 5).tril(5 - 5))
    assert _right("attn-causal-top-left") == {1}


@pytest.mark.verifies("attn-causal-kv-cache-fix")
def test_bottom_right_causal_masks_for_a_kv_cache():
    g = torch.Generator().manual_seed(4)
    lq, lk = 2, 5
    q_all = torch.randn(1, 2, lk, 8, generator=g, dtype=torch.float64)
    k = torch.randn(1, 2, lk, 8, generator=g, dtype=torch.float64)
    v = torch.randn(1, 2, lk, 3, generator=g, dtype=torch.float64)
    # the truth: full causal attention over all five tokens, last two rows
    truth = F.scaled_dot_product_attention(q_all, k, v, is_causal=True)[..., lk - lq:, :]
    q = q_all[..., lk - lq:, :]
    ones = torch.ones(lq, lk, dtype=torch.bool)
    sdpa = lambda **kw: F.scaled_dot_product_attention(q, k, v, **kw)
    assert torch.allclose(sdpa(attn_mask=ones.tril(lk - lq)), truth, rtol=1e-12)  # choice 0
    assert torch.allclose(sdpa(attn_mask=causal_lower_right(lq, lk)), truth, rtol=1e-12)  # choice 1
    assert (sdpa(is_causal=True) - truth).abs().max() > 1e-3  # choice 2
    assert (sdpa(attn_mask=ones.triu(lk - lq)) - truth).abs().max() > 1e-3  # choice 3
    one = F.scaled_dot_product_attention(q_all[..., -1:, :], k, v)  # choice 4: Lq = 1, no mask
    assert torch.allclose(one, truth[..., -1:, :], rtol=1e-12)
    wrong_sign = ones.tril(lq - lk)
    assert not wrong_sign.any()  # choice 5: every row empty here, since Lk >= 2 Lq
    kept = torch.ones(3, 4, dtype=torch.bool).tril(3 - 4).sum(-1)  # Lq = 3, Lk = 4: rows lose keys
    assert kept.tolist() == [0, 1, 2] and (kept < torch.ones(3, 4, dtype=torch.bool).tril(1).sum(-1)).all()
    assert torch.equal(sdpa(attn_mask=wrong_sign), torch.zeros_like(truth))  # torch 2.13 gives zeros
    assert _right("attn-causal-kv-cache-fix") == {0, 1, 4}


@pytest.mark.verifies("attn-masked-row-online-softmax")
def test_fully_masked_first_block_poisons_an_unguarded_row():
    q, k, v = _qkv(b=1, h=1, nq=3, nk=8, d=4, dv=4, seed=5)
    mask = torch.ones(3, 8, dtype=torch.bool)
    mask[1, :4] = False  # row 1: the first block of 4 keys is fully masked, the second is not
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    unguarded, _ = online_attention(q, k, v, 4, mask=mask, guard=False)
    assert torch.isnan(unguarded[..., 1, :]).all()  # choice 3: NaN
    assert not torch.isinf(unguarded[..., 1, :]).any()  # choice 2: not inf
    assert not torch.equal(unguarded[..., 1, :], torch.zeros(1, 1, 4, dtype=torch.float64))  # choice 1
    assert not torch.allclose(unguarded[..., 1, :], ref[..., 1, :])  # choice 0: not the right output
    assert torch.isnan(torch.exp(torch.tensor(-INF) - torch.tensor(-INF)))
    assert torch.allclose(unguarded[..., [0, 2], :], ref[..., [0, 2], :], rtol=1e-12)  # other rows fine
    guarded, _ = online_attention(q, k, v, 4, mask=mask, guard=True)
    assert torch.allclose(guarded, ref, rtol=1e-12)
    # a row with every key masked: torch 2.13's SDPA returns zeros on CPU; the documented formula gives NaN
    empty = mask.clone()
    empty[1] = False
    for backend in (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION):
        with sdpa_kernel([backend]):
            assert torch.equal(F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=empty)[..., 1, :],
                               torch.zeros(1, 1, 4))
    scores = (q @ k.transpose(-2, -1) / 2).masked_fill(~empty, -INF)
    assert torch.isnan(torch.softmax(scores, -1)[..., 1, :]).all()
    # top-left causal: every row sees key 0; bottom-right with Lq > Lk leaves rows empty
    assert torch.ones(6, 3, dtype=torch.bool).tril(0).any(-1).all()
    assert not torch.ones(6, 3, dtype=torch.bool).tril(3 - 6)[0].any()
    assert _right("attn-masked-row-online-softmax") == {3}


def kv_cache_bytes(layers, kv_heads, head_dim, seq, batch, dtype):
    """Bytes of a KV cache laid out as one K and one V tensor (batch, kv_heads, seq, head_dim) per layer."""
    total = 0
    for _ in range(layers):
        for _kv in ("k", "v"):
            total += torch.empty(batch, kv_heads, seq, head_dim, dtype=dtype, device="meta").nbytes
    return total


@pytest.mark.verifies("attn-kv-cache-bytes")
def test_kv_cache_of_a_7b_mha_model():
    n = kv_cache_bytes(32, 32, 128, 4096, 4, torch.float16)
    assert n == 8_589_934_592
    assert accepts(TOPIC, "attn-kv-cache-bytes", str(n / 2**30))
    assert not accepts(TOPIC, "attn-kv-cache-bytes", str(n / 1e9))  # GB instead of GiB: 8.59
    assert not accepts(TOPIC, "attn-kv-cache-bytes", str(n / 2 / 2**30))  # K only, or 1 byte per value
    assert kv_cache_bytes(32, 32, 128, 1, 1, torch.float16) == 512 * 1024  # 512 KiB per token
    assert 6_738_415_616 * 2 / 1e9 == pytest.approx(13.5, abs=0.05)


@pytest.mark.verifies("attn-kv-cache-gqa-70b")
def test_kv_cache_of_a_70b_gqa_model():
    n = kv_cache_bytes(80, 8, 128, 32768, 1, torch.bfloat16)
    assert n == 10_737_418_240
    assert accepts(TOPIC, "attn-kv-cache-gqa-70b", str(n / 2**30))
    mha = kv_cache_bytes(80, 64, 128, 32768, 1, torch.bfloat16)
    assert mha / 2**30 == 80 and mha // n == 8
    assert not accepts(TOPIC, "attn-kv-cache-gqa-70b", str(mha / 2**30))  # the query heads do not count


@pytest.mark.verifies("attn-gqa-shrink")
def test_gqa_cache_shrinks_by_heads_over_kv_heads():
    mha = kv_cache_bytes(2, 32, 64, 16, 1, torch.float16)
    gqa = kv_cache_bytes(2, 8, 64, 16, 1, torch.float16)
    mqa = kv_cache_bytes(2, 1, 64, 16, 1, torch.float16)
    assert mha / gqa == 4  # choice 1; choice 0: not 8
    assert mha / mqa == 32  # choice 3 describes MQA, not 8 KV heads
    # choice 2: attention runs from the 8 stored heads; nothing per query head has to be cached
    g = torch.Generator().manual_seed(6)
    q = torch.randn(1, 32, 5, 8, generator=g)
    k, v = torch.randn(1, 8, 5, 8, generator=g), torch.randn(1, 8, 5, 8, generator=g)
    assert F.scaled_dot_product_attention(q, k, v, enable_gqa=True).shape == (1, 32, 5, 8)
    assert _right("attn-gqa-shrink") == {1}


@pytest.mark.verifies("attn-gqa-expand")
def test_gqa_expansion_must_interleave_the_heads():
    g = torch.Generator().manual_seed(7)
    B, N, D = 2, 6, 8
    q = torch.randn(B, 32, N, D, generator=g, dtype=torch.float64)
    k = torch.randn(B, 8, N, D, generator=g, dtype=torch.float64)
    v = torch.randn(B, 8, N, D, generator=g, dtype=torch.float64)
    ref = torch.stack([F.scaled_dot_product_attention(q[:, h], k[:, h // 4], v[:, h // 4]) for h in range(32)], 1)
    sdpa = F.scaled_dot_product_attention
    assert torch.allclose(sdpa(q, k, v, enable_gqa=True), ref, rtol=1e-12)  # choice 0
    rk, rv = k.repeat_interleave(4, dim=1), v.repeat_interleave(4, dim=1)
    assert torch.allclose(sdpa(q, rk, rv), ref, rtol=1e-12)  # choice 1
    tk, tv = k.repeat(1, 4, 1, 1), v.repeat(1, 4, 1, 1)
    assert (sdpa(q, tk, tv) - ref).abs().max() > 1e-3  # choice 2
    ek = k[:, None].expand(B, 4, 8, N, D).reshape(B, 32, N, D)
    ev = v[:, None].expand(B, 4, 8, N, D).reshape(B, 32, N, D)
    assert torch.equal(ek, tk) and (sdpa(q, ek, ev) - ref).abs().max() > 1e-3  # choice 3
    hf = k[:, :, None].expand(B, 8, 4, N, D).reshape(B, 32, N, D)  # Hugging Face's repeat_kv
    assert torch.equal(hf, rk)
    with pytest.raises(RuntimeError):  # choice 4: 32 heads do not broadcast against 8
        sdpa(q, k, v)
    mqa = sdpa(q, k[:, :1], v[:, :1])  # one KV head does broadcast
    assert torch.allclose(mqa, sdpa(q, k[:, :1].expand(B, 32, N, D), v[:, :1].expand(B, 32, N, D)))
    with pytest.raises(RuntimeError):  # enable_gqa needs query heads to be a multiple of KV heads
        sdpa(q, k[:, :3], v[:, :3], enable_gqa=True)
    assert _right("attn-gqa-expand") == {0, 1}


@pytest.mark.verifies("attn-mqa-name")
def test_multi_query_attention_name_and_cache_factor():
    for spelling in ("Multi-Query Attention", "MQA", "multi query attention", "  multiquery   attention "):
        assert accepts(TOPIC, "attn-mqa-name", spelling), spelling
    for wrong in ("grouped-query attention", "GQA", "multi-head attention", "MHA"):
        assert not accepts(TOPIC, "attn-mqa-name", wrong), wrong
    for heads in (8, 32, 64):
        assert kv_cache_bytes(1, heads, 64, 4, 1, torch.float16) // kv_cache_bytes(1, 1, 64, 4, 1, torch.float16) == heads


@pytest.mark.verifies("attn-flash-forward-order")
def test_flash_attention_2_forward_in_the_listed_order():
    items = topic_questions(TOPIC)["attn-flash-forward-order"].items
    assert len(items) == 7 and "divide O by ℓ" in items[5] and "logsumexp" in items[6]
    q, k, v = _qkv(b=1, h=2, nq=10, nk=13, d=8, dv=6, seed=8)
    scale = 1 / math.sqrt(8)
    outs, lses = [], []
    for qs in range(0, 10, 4):
        qb = q[..., qs:qs + 4, :]  # 1. load the query block and initialise
        m = qb.new_full((*qb.shape[:-1], 1), -INF)
        lsum = qb.new_zeros((*qb.shape[:-1], 1))
        o = qb.new_zeros((*qb.shape[:-1], 6))
        for ks in range(0, 13, 5):
            kb, vb = k[..., ks:ks + 5, :], v[..., ks:ks + 5, :]  # 2. load a key/value block
            s = qb @ kb.transpose(-2, -1) * scale  # 3. score tile
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))  # 4. new running max
            p = torch.exp(s - m_new)  # 5. rescale, then add the block's terms
            alpha = torch.exp(m - m_new)
            lsum = alpha * lsum + p.sum(-1, keepdim=True)
            o = alpha * o + p @ vb
            m = m_new
        outs.append(o / lsum)  # 6. one division after the last block
        lses.append(m + torch.log(lsum))  # 7. write O and the logsumexp
    assert torch.allclose(torch.cat(outs, -2), F.scaled_dot_product_attention(q, k, v), rtol=1e-12)
    assert torch.allclose(torch.cat(lses, -2).squeeze(-1),
                          torch.logsumexp(q @ k.transpose(-2, -1) * scale, -1), rtol=1e-12)
