"""Facts taught by questions/activation-memory.yaml about what autograd saves and where it
keeps it: which tensors each op saves, activation arithmetic, saved-tensor hooks and offloading.
(Checkpointing is in test_facts_activation_memory_recompute.py.)

Single and multi questions: every choice is settled (`# choice N`, N its index in the file), then
the file's key must be exactly the set found true. Numeric questions compute their value and check
that the file's tolerance takes it rounded as the prompt asks and rejects the usual slips.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from autograd_probe import activation_bytes, saved_tensors
from autograd_probe import leaf as _x
from bankkeys import accepts, right_choices
from torch import nn

IN_PLACE_ERROR = "modified by an inplace operation"
TOPIC = "activation-memory"


def _right(qid: str) -> set[int]:
    return right_choices(TOPIC, qid)


def _accepts(qid: str, answer) -> bool:
    return accepts(TOPIC, qid, answer)


@pytest.mark.verifies("amem-linear-saves")
def test_linear_saves_its_input_not_its_output():
    lin = nn.Linear(8, 3)
    x = _x(4, 8)
    saved = saved_tensors(lin, x)
    activations = [t for t in saved if t.untyped_storage().data_ptr() != lin.weight.untyped_storage().data_ptr()]
    assert len(activations) == 1 and torch.equal(activations[0], x)  # choice 0; choices 1, 2, 3 are false
    assert any(t.untyped_storage().data_ptr() == lin.weight.untyped_storage().data_ptr() for t in saved)
    # frozen weight: only dL/dx is needed, and x is no longer kept
    lin.requires_grad_(False)
    assert all(t.untyped_storage().data_ptr() == lin.weight.untyped_storage().data_ptr() for t in saved_tensors(lin, x))
    # a (B, T, d_in) input: the saved tensor is its (B*T, d_in) view, the same storage as x
    lin.requires_grad_(True)
    x3 = _x(2, 5, 8)
    activations = [t for t in saved_tensors(lin, x3)
                   if t.untyped_storage().data_ptr() != lin.weight.untyped_storage().data_ptr()]
    assert len(activations) == 1 and activations[0].shape == (10, 8)
    assert activations[0].untyped_storage().data_ptr() == x3.untyped_storage().data_ptr()
    assert _right("amem-linear-saves") == {0}


@pytest.mark.verifies("amem-output-savers")
def test_which_ops_save_their_output():
    x = _x(4, 8)

    def saves_output(fn) -> bool:
        out = fn(x)
        (kept,) = saved_tensors(fn, x)
        if torch.equal(kept, out.detach()) and not torch.equal(kept, x.detach()):
            return True
        assert torch.equal(kept, x.detach())
        return False

    assert saves_output(torch.relu)  # choice 0
    assert saves_output(lambda t: torch.softmax(t, -1))  # choice 1
    assert not saves_output(F.gelu)  # choice 2
    assert not saves_output(F.silu)  # choice 3
    assert saves_output(torch.sigmoid)  # choice 4
    out = F.layer_norm(x, (8,))
    kept = saved_tensors(lambda t: F.layer_norm(t, (8,)), x)
    assert any(torch.equal(t, x.detach()) for t in kept)  # choice 5: its input, with mean and 1/std
    assert not any(t.shape == out.shape and torch.allclose(t, out.detach()) for t in kept)
    assert _right("amem-output-savers") == {0, 1, 4}


@pytest.mark.verifies("amem-inplace-error")
def test_which_in_place_edit_breaks_backward():
    lin = nn.Linear(8, 3)
    x = _x(4, 8)
    h = lin(x)
    torch.relu_(h).sum().backward()  # choice 0: fine
    y = torch.exp(x * 1)
    y.add_(1)
    with pytest.raises(RuntimeError, match=IN_PLACE_ERROR):  # choice 1
        y.sum().backward()
    y = F.gelu(x * 1)
    y.add_(1)
    y.sum().backward()  # choice 2: fine
    h = lin(x)
    h.mul_(2)
    h.sum().backward()  # choice 3: fine
    w = x * 1  # the explanation's rule: overwriting GELU's saved input does break it
    g = F.gelu(w)
    w.add_(1)
    with pytest.raises(RuntimeError, match=IN_PLACE_ERROR):
        g.sum().backward()
    assert _right("amem-inplace-error") == {1}


@pytest.mark.verifies("amem-dropout-saves")
def test_dropout_keeps_a_mask_not_its_input_on_cpu():
    x = _x(64, 32)
    torch.manual_seed(0)
    (kept,) = saved_tensors(lambda t: F.dropout(t, p=0.1, training=True), x)
    assert kept.shape == x.shape  # a mask of x's shape
    assert kept.unique().tolist() == pytest.approx([0.0, 1 / 0.9])  # CPU: a scaled float mask; choice 0: not x
    assert (kept == 0).any()  # choice 3: backward needs it, zeros where dropped


@pytest.mark.verifies("amem-dropout-saves")
def test_native_dropout_the_cuda_path_keeps_a_bool_mask():
    # On CUDA, F.dropout in training runs the fused `native_dropout`; its CPU kernel saves the same
    x = _x(64, 32)
    (kept,) = saved_tensors(lambda t: torch.ops.aten.native_dropout(t, 0.1, True)[0], x)
    assert kept.dtype == torch.bool and kept.shape == x.shape and kept.element_size() == 1  # choice 2
    assert not torch.equal(kept, x.detach())  # choice 0: not x; choice 1: a whole mask, not a seed
    assert not kept.all()  # choice 3: which elements were dropped matters
    assert _right("amem-dropout-saves") == {2}


@pytest.mark.verifies("amem-dropout-saves")
@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA dropout keeps a bool mask")
def test_dropout_keeps_a_bool_mask_on_cuda():
    x = _x(64, 32).detach().cuda().requires_grad_(True)
    (kept,) = saved_tensors(lambda t: F.dropout(t, p=0.1, training=True), x)
    assert kept.dtype == torch.bool and kept.shape == x.shape  # choice 2; choices 0, 1, 3 are false
    assert kept.element_size() == 1


def _mlp(h: int, act: nn.Module) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(h, 4 * h), act, nn.Linear(4 * h, h)).to(torch.bfloat16)


@pytest.mark.verifies("amem-mlp-bytes")
def test_mlp_block_saves_18h_bytes_per_token_in_bf16():
    b, s, h = 2, 8, 16
    x = _x(b, s, h).detach().to(torch.bfloat16).requires_grad_(True)
    assert activation_bytes(_mlp(h, nn.GELU()), x) == 18 * h * b * s
    assert activation_bytes(_mlp(h, nn.ReLU()), x) == 10 * h * b * s  # ReLU: 5h values per token
    frozen_first = _mlp(h, nn.GELU())
    frozen_first[0].requires_grad_(False)
    assert activation_bytes(frozen_first, x) == 16 * h * b * s  # its input is kept only for a trainable weight
    tokens, hidden = 8 * 2048, 4096
    per_token = activation_bytes(_mlp(h, nn.GELU()), x) // (b * s * h)  # bytes per token per unit of h
    gib = per_token * hidden * tokens / 2**30
    assert _accepts("amem-mlp-bytes", f"{gib:.3f}")
    assert not _accepts("amem-mlp-bytes", f"{gib * 2**30 / 1e9:.3f}")  # GB, not GiB
    assert not _accepts("amem-mlp-bytes", f"{10 * hidden * tokens / 2**30:.3f}")  # the ReLU count
    assert not _accepts("amem-mlp-bytes", f"{20 * hidden * tokens / 2**30:.3f}")  # the output counted too


@pytest.mark.verifies("amem-attention-scores")
def test_saved_attention_probabilities_take_b_a_s_s_values():
    b, a, s, d = 1, 2, 16, 8
    q, k, v = (_x(b, a, s, d, seed=i).detach().to(torch.bfloat16).requires_grad_(True) for i in range(3))

    def attention(q):
        return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d), -1) @ v

    probs_bytes = max(t.untyped_storage().nbytes() for t in saved_tensors(attention, q))
    assert probs_bytes == b * a * s * s * 2
    gib = probs_bytes // (b * a * s * s) * 1 * 32 * 4096 * 4096 / 2**30
    assert _accepts("amem-attention-scores", f"{gib:.2f}") and _accepts("amem-attention-scores", "1")
    assert not _accepts("amem-attention-scores", f"{gib * 2**30 / 1e9:.2f}")  # GB, not GiB
    assert not _accepts("amem-attention-scores", f"{2 * gib:.2f}")  # float32 bytes

    # attention dropout (CUDA's 1-byte mask): the mask plus the dropped probabilities, 1.5x the probabilities
    def with_dropout(q):
        probs = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d), -1)
        return torch.ops.aten.native_dropout(probs, 0.1, True)[0] @ v

    square = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes()
              for t in saved_tensors(with_dropout, q) if t.shape[-2:] == (s, s)}
    assert sorted(square.values()) == [b * a * s * s, probs_bytes, probs_bytes]
    assert sum(square.values()) - probs_bytes == 1.5 * probs_bytes



@pytest.mark.verifies("amem-save-on-cpu")
def test_save_on_cpu_is_a_saved_tensor_hook_and_keeps_gradients():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 1))
    x = _x(4, 8)
    model(x).sum().backward()
    plain = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    offload = torch.autograd.graph.save_on_cpu(pin_memory=False)
    assert isinstance(offload, torch.autograd.graph.saved_tensors_hooks)  # choice 3: it hooks saved tensors
    with offload:
        out = model(x)
    assert next(model.parameters()).device.type == "cpu"
    out.sum().backward()
    assert all(torch.equal(p.grad, g) for p, g in zip(model.parameters(), plain))
    # every saved tensor is copied, the weights that the Linears save included (pin_memory=True
    # copies into a fresh buffer even here, where .cpu() of a CPU tensor would return the tensor itself)
    offload = torch.autograd.graph.save_on_cpu(pin_memory=True)
    packed, pack = [], offload.pack_hook
    offload.pack_hook = lambda t: packed.append(t) or pack(t)
    with offload:
        model(x)
    weights = {model[0].weight.untyped_storage().data_ptr(), model[2].weight.untyped_storage().data_ptr()}
    assert weights <= {t.untyped_storage().data_ptr() for t in packed}
    _, copy = pack(model[0].weight)
    assert torch.equal(copy, model[0].weight) and copy.untyped_storage().data_ptr() not in weights
    assert _right("amem-save-on-cpu") == {3}  # choices 0, 1 and 2 are settled by the GPU test below


@pytest.mark.verifies("amem-save-on-cpu")
@pytest.mark.skipif(not torch.cuda.is_available(), reason="offloading is visible only with a GPU")
def test_save_on_cpu_moves_saved_tensors_off_the_gpu():
    model = nn.Sequential(*[nn.Sequential(nn.Linear(1024, 1024), nn.GELU()) for _ in range(8)]).cuda()
    x = torch.randn(512, 1024, device="cuda", requires_grad=True)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    out = model(x)
    on_gpu = torch.cuda.memory_allocated() - base
    del out
    with torch.autograd.graph.save_on_cpu(pin_memory=True):
        out = model(x)
    offloaded = torch.cuda.memory_allocated() - base
    assert offloaded < on_gpu / 4  # choice 3
    assert next(model.parameters()).is_cuda  # choices 0 and 1: parameters and compute stay on the GPU
    out.sum().backward()
    assert x.grad is not None and x.grad.is_cuda  # choice 2: gradients are made on the GPU


@pytest.mark.verifies("amem-hooks-name")
def test_saved_tensors_hooks_run_on_save_and_on_use():
    calls = {"pack": 0, "unpack": 0}

    def pack(t):
        calls["pack"] += 1
        return t

    def unpack(t):
        calls["unpack"] += 1
        return t

    x = _x(4, 8)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = torch.exp(x)
    assert calls == {"pack": 1, "unpack": 0}
    y.sum().backward()
    assert calls == {"pack": 1, "unpack": 1}
    # counting bytes in pack_hook: parameters are packed too, and one tensor can be packed twice
    lin = nn.Linear(8, 8)
    kept = saved_tensors(lambda t: lin(torch.relu(t)), x)
    storages = [t.untyped_storage().data_ptr() for t in kept]
    assert lin.weight.untyped_storage().data_ptr() in storages  # the Linear saves its weight
    assert len(storages) > len(set(storages))  # the ReLU's output: saved by the ReLU and by the Linear
    assert _accepts("amem-hooks-name", torch.autograd.graph.saved_tensors_hooks.__name__)
    assert _accepts("amem-hooks-name", "torch.autograd.graph.saved_tensors_hooks")


class _GPTLayer(nn.Module):
    """A pre-norm Transformer layer as Korthikanti et al. count it: bf16, dropout with 1-byte masks
    (`native_dropout`, what CUDA runs), hand-written attention, inputs laid out (s, b, h)."""

    def __init__(self, h: int, a: int):
        super().__init__()
        self.h, self.a = h, a
        self.ln1, self.qkv, self.proj = nn.LayerNorm(h), nn.Linear(h, 3 * h), nn.Linear(h, h)
        self.ln2, self.fc1, self.fc2 = nn.LayerNorm(h), nn.Linear(h, 4 * h), nn.Linear(4 * h, h)

    @staticmethod
    def drop(t):
        return torch.ops.aten.native_dropout(t, 0.1, True)[0]

    def forward(self, x):
        s, b, h = x.shape
        d = h // self.a
        q, k, v = self.qkv(self.ln1(x)).split(h, -1)
        heads = lambda t: t.reshape(s, b, self.a, d).permute(1, 2, 0, 3)  # noqa: E731
        q, k, v = heads(q), heads(k), heads(v)
        probs = self.drop(torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d), -1))
        x = x + self.drop(self.proj((probs @ v).permute(2, 0, 1, 3).reshape(s, b, h)))
        return x + self.drop(self.fc2(F.gelu(self.fc1(self.ln2(x)))))


@pytest.mark.verifies("amem-what-dominates")
def test_a_layer_saves_sbh_34_plus_5as_over_h_bytes():
    s, b, h, a = 24, 2, 64, 4
    torch.manual_seed(0)
    layer = _GPTLayer(h, a).to(torch.bfloat16)
    x = _x(s, b, h).detach().to(torch.bfloat16).requires_grad_(True)
    layernorm_stats = 2 * 2 * s * b * 2  # two LayerNorms keep a mean and a 1/std per token (bf16 here)
    assert activation_bytes(layer, x) == s * b * h * (34 + 5 * a * s / h) + layernorm_stats
    # the s x s tensors: softmax output (2 bytes), its mask (1 byte), the dropped probabilities (2 bytes)
    square = [t for t in saved_tensors(layer, x) if t.shape[-2:] == (s, s)]
    assert sorted(t.element_size() for t in square) == [1, 2, 2]
    assert sum(t.numel() * t.element_size() for t in square) == 5 * a * s * s * b
    # not the raw scores: softmax's backward uses its output
    q, k, _ = (t.reshape(s, b, a, h // a).permute(1, 2, 0, 3) for t in layer.qkv(layer.ln1(x)).split(h, -1))
    scores = q @ k.transpose(-1, -2) / math.sqrt(h // a)
    assert not any(torch.equal(t, scores) for t in square)
    assert any(torch.equal(t, torch.softmax(scores, -1)) for t in square)
    # linear in b, quadratic in s through that term
    x2 = _x(2 * s, b, h).detach().to(torch.bfloat16).requires_grad_(True)
    assert activation_bytes(layer, x2) - 2 * activation_bytes(layer, x) == 5 * a * b * (4 * s * s - 2 * s * s)


@pytest.mark.verifies("amem-what-dominates")
def test_sdpa_keeps_no_s_by_s_tensor_only_when_a_fused_kernel_runs():
    b, a, s, d = 1, 2, 256, 32
    q, k, v = (_x(b, a, s, d, seed=i).detach().to(torch.bfloat16).requires_grad_(True) for i in range(3))

    def square_storages(p):
        kept = saved_tensors(lambda: F.scaled_dot_product_attention(q, k, v, dropout_p=p))
        return {t.untyped_storage().data_ptr() for t in kept if t.shape[-2:] == (s, s)}

    assert len(square_storages(0.0)) == 0  # CPU flash kernel: Q, K, V, output and a log-sum-exp per row
    kept = saved_tensors(lambda: F.scaled_dot_product_attention(q, k, v))
    assert any(t.shape == (b, a, s) for t in kept)  # the log-sum-exp
    torch.manual_seed(0)
    assert len(square_storages(0.1)) == 3  # with dropout on CPU: the math path, s x s tensors kept


@pytest.mark.verifies("amem-offload-tradeoffs")
def test_compute_per_saved_byte_and_the_two_trips_of_an_offloaded_tensor():
    from torch.utils.flop_counter import FlopCounterMode

    def forward_and_backward_flops(fn, *inputs):
        with FlopCounterMode(display=False) as counter:
            fn(*inputs).float().sum().backward()
        return counter.get_total_flops()

    for width in (64, 256):  # a linear layer: about 6 x its output width per saved input element
        lin = nn.Linear(32, width, bias=False).to(torch.bfloat16)
        x = _x(128, 32).to(torch.bfloat16).detach().requires_grad_(True)
        weight = lin.weight.untyped_storage().data_ptr()
        kept = [t for t in saved_tensors(lin, x) if t.untyped_storage().data_ptr() != weight]
        assert [t.shape for t in kept] == [x.shape]  # its only activation is its input
        assert forward_and_backward_flops(lin, x) / x.numel() == 6 * width
    for s in (32, 64):  # the P · V product of attention: about 6 x head dim per element of P, whatever s
        d = 16
        p = _x(2, s, s, seed=1).softmax(-1).detach().to(torch.bfloat16).requires_grad_(True)
        v = _x(2, s, d, seed=2).to(torch.bfloat16).detach().requires_grad_(True)
        assert forward_and_backward_flops(torch.matmul, p, v) / p.numel() == 6 * d
    # offloading through saved-tensor hooks: each saved tensor goes out once (pack) and back once (unpack)
    trips = {"out": 0, "back": 0}

    def pack(t):
        trips["out"] += 1
        return t.to("cpu", copy=True)

    def unpack(t):
        trips["back"] += 1
        return t

    lin = nn.Linear(8, 8)
    x = _x(4, 8)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = lin(x).relu().sum()
    y.backward()
    assert trips["out"] == trips["back"] > 0
    expected = lin.weight.grad.clone()
    lin.zero_grad()
    with torch.autograd.graph.save_on_cpu(pin_memory=False):
        lin(x).relu().sum().backward()
    assert torch.equal(lin.weight.grad, expected)
