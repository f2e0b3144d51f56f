"""Facts taught by questions/activation-memory.yaml: what autograd saves, checkpointing and
offloading, checked with saved-tensor hooks on small tensors."""

from __future__ import annotations

import functools
import math
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts
from torch.utils._python_dispatch import TorchDispatchMode

IN_PLACE_ERROR = "modified by an inplace operation"


def saved_tensors(fn, *args) -> list[torch.Tensor]:
    """The tensors autograd saves while running fn(*args), in the order it saves them."""
    saved: list[torch.Tensor] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(*args)
    return saved


def activation_bytes(model: nn.Module, x: torch.Tensor) -> int:
    """Bytes of the distinct non-parameter tensors saved for backward (shared storage counted once)."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    storages: dict[int, int] = {}
    for t in saved_tensors(model, x):
        storage = t.untyped_storage()
        if storage.data_ptr() not in params:
            storages[storage.data_ptr()] = storage.nbytes()
    return sum(storages.values())


def _x(*shape: int, seed: int = 0, grad: bool = True) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).requires_grad_(grad)


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


@pytest.mark.verifies("amem-dropout-saves")
def test_dropout_keeps_a_mask_not_its_input_on_cpu():
    x = _x(64, 32)
    torch.manual_seed(0)
    (kept,) = saved_tensors(lambda t: F.dropout(t, p=0.1, training=True), x)
    assert kept.shape == x.shape  # a mask of x's shape
    assert kept.unique().tolist() == pytest.approx([0.0, 1 / 0.9])  # CPU: a scaled float mask; choice 0: not x
    assert (kept == 0).any()  # choice 3: backward needs it, zeros where dropped


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
    gib = 18 * 4096 * 8 * 2048 / 2**30
    assert round(gib, 3) == pytest.approx(1.125)


@pytest.mark.verifies("amem-attention-scores")
def test_saved_attention_probabilities_take_b_a_s_s_values():
    b, a, s, d = 1, 2, 16, 8
    q, k, v = (_x(b, a, s, d, seed=i).detach().to(torch.bfloat16).requires_grad_(True) for i in range(3))

    def attention(q):
        return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d), -1) @ v

    probs_bytes = max(t.untyped_storage().nbytes() for t in saved_tensors(attention, q))
    assert probs_bytes == b * a * s * s * 2
    assert round(1 * 32 * 4096 * 4096 * 2 / 2**30, 2) == pytest.approx(1.00)


class Block(nn.Module):
    def __init__(self, events: list[str] | None = None, name: str = "block"):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.5)
        self.events = events
        self.name = name
        self.forward_calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.forward_calls += 1
        if self.events is not None:
            self.events.append(f"{self.name} forward")
        return self.drop(F.gelu(self.lin(x)))


@pytest.mark.verifies("amem-forward-count")
def test_a_checkpointed_block_runs_forward_twice_per_step():
    block = Block()
    checkpoint(block, _x(4, 8), use_reentrant=False).sum().backward()
    assert block.forward_calls == 2


@pytest.mark.verifies("amem-checkpoint-order")
def test_order_of_events_around_a_checkpointed_block():
    events: list[str] = []
    first, middle, last = Block(events, "first"), Block(events, "middle"), Block(events, "last")
    middle.register_full_backward_pre_hook(lambda *_: events.append("middle backward reached"))
    last.register_full_backward_hook(lambda *_: events.append("last backward done"))
    middle.lin.weight.register_hook(lambda g: events.append("middle weight grad"))
    h = first(_x(4, 8))
    h = checkpoint(middle, h, use_reentrant=False)
    events.append("later blocks")
    last(h).sum().backward()
    i = events.index
    assert i("middle forward") < i("later blocks") < i("last backward done")
    recompute = len(events) - 1 - events[::-1].index("middle forward")
    assert recompute > i("last backward done")  # the block reruns only when backward reaches it
    assert recompute < i("middle weight grad")
    assert events.count("middle forward") == 2


def _grads_with_dropout(use_checkpoint: bool, **kwargs) -> torch.Tensor:
    torch.manual_seed(0)
    block = Block()
    x = _x(16, 8)
    torch.manual_seed(1)
    out = checkpoint(block, x, use_reentrant=False, **kwargs) if use_checkpoint else block(x)
    out.sum().backward()
    return block.lin.weight.grad


@pytest.mark.verifies("amem-checkpoint-dropout")
def test_checkpoint_replays_the_dropout_masks():
    plain = _grads_with_dropout(False)
    assert torch.equal(_grads_with_dropout(True), plain)  # choice 3; choices 0, 1 and 2 are false
    assert not torch.allclose(_grads_with_dropout(True, preserve_rng_state=False), plain)


@pytest.mark.verifies("amem-reentrant-no-grad-input")
def test_reentrant_checkpoint_drops_parameter_gradients_when_no_input_requires_grad():
    data = _x(4, 8, grad=False)
    block = Block()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = checkpoint(block, data, use_reentrant=True)  # choice 2: no error
    assert not out.requires_grad and out.grad_fn is None  # choice 1
    assert any("None of the inputs have requires_grad=True" in str(w.message) for w in caught)
    fixed = Block()
    checkpoint(fixed, data, use_reentrant=False).sum().backward()
    assert fixed.lin.weight.grad is not None  # choices 1 and 3: False works; choice 0: the two differ
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checkpoint(Block(), _x(4, 8), use_reentrant=True)
        checkpoint(Block(), _x(4, 8))
    assert any("use_reentrant parameter should be passed explicitly" in str(w.message) for w in caught)


@pytest.mark.verifies("amem-sqrt-segments")
def test_best_segment_count_for_64_layers():
    n = 64
    peaks = {k: k + n // k for k in range(1, n + 1) if n % k == 0}
    best = min(peaks, key=peaks.get)
    assert (best, peaks[best]) == (8, 16)
    # checkpoint_sequential gives the same gradients as the plain chain
    torch.manual_seed(0)
    layers = nn.Sequential(*[nn.Sequential(nn.Linear(4, 4), nn.Tanh()) for _ in range(n)])
    x = _x(2, 4)
    layers(x).sum().backward()
    plain = layers[0][0].weight.grad.clone()
    layers.zero_grad()
    torch.utils.checkpoint.checkpoint_sequential(layers, best, x, use_reentrant=False).sum().backward()
    assert torch.allclose(layers[0][0].weight.grad, plain)


class OpLog(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def _backward_ops(**kwargs) -> list[str]:
    a = _x(8, 16, grad=False)
    w1, w2 = _x(16, 16, seed=1), _x(16, 4, seed=2)
    out = checkpoint(lambda a, w1, w2: (torch.relu(a @ w1) @ w2).sum(), a, w1, w2, use_reentrant=False, **kwargs)
    log = OpLog()
    with log:
        out.backward()
    return log.ops


@pytest.mark.verifies("amem-selective")
def test_selective_policy_recomputes_only_what_it_does_not_save():
    def policy(ctx, op, *args, **kwargs):
        return CheckpointPolicy.MUST_SAVE if op == torch.ops.aten.mm.default else CheckpointPolicy.PREFER_RECOMPUTE

    full = _backward_ops()
    selective = _backward_ops(context_fn=functools.partial(create_selective_checkpoint_contexts, policy))
    # backward of two matmuls needs 3 mm (grad w2, grad h, grad w1); plain checkpointing reruns the first
    assert full.count("aten.mm.default") == 4  # choice 0 describes this, not the policy's run
    assert selective.count("aten.mm.default") == 3  # choices 0 and 1: no matmul runs again
    assert selective.count("aten.relu.default") == 1  # choice 2; choice 3: not nothing


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


@pytest.mark.verifies("amem-reduce-memory")
def test_what_saves_memory_and_keeps_the_gradients():
    torch.manual_seed(0)
    model = nn.Sequential(Block(), Block(), nn.Linear(8, 1))
    x = _x(16, 8)

    def grads(run) -> list[torch.Tensor]:
        model.zero_grad()
        torch.manual_seed(1)
        run().sum().backward()
        return [p.grad.clone() for p in model.parameters()]

    plain = grads(lambda: model(x))
    nothing_kept = sum(t.numel() for t in saved_tensors(lambda t: checkpoint(model, t, use_reentrant=False), x))
    assert nothing_kept < sum(t.numel() for t in saved_tensors(model, x))  # choice 0 keeps less
    assert all(torch.equal(a, b) for a, b in zip(grads(lambda: checkpoint(model, x, use_reentrant=False)), plain))  # choice 0

    def offloaded():
        with torch.autograd.graph.save_on_cpu():
            return model(x)

    assert all(torch.equal(a, b) for a, b in zip(grads(offloaded), plain))  # choice 1
    out = model(x)
    out.sum().backward(retain_graph=True)
    out.sum().backward()  # choice 2: the saved tensors were still alive after the first backward
    with torch.no_grad():
        assert not model(x).requires_grad  # choice 3: no gradients at all
    model.eval()
    try:
        eval_grads = grads(lambda: model(x))
    finally:
        model.train()
    assert not all(torch.allclose(a, b) for a, b in zip(eval_grads, plain))  # choice 4: different gradients
