"""Facts taught by questions/activation-memory.yaml about recomputation: activation
checkpointing (non-reentrant and reentrant, RNG replay, selective policies, sqrt(n) segments),
its compute overhead, and which tricks save memory without changing the gradients.

Single and multi questions: every choice is settled (`# choice N`, N its index in the file), then
the file's key must be exactly the set found true. Numeric questions compute their value and check
that the file's tolerance takes it rounded as the prompt asks and rejects the usual slips.
"""

from __future__ import annotations

import functools
import warnings

import pytest
import torch
import torch.nn.functional as F
from autograd_probe import leaf as _x
from autograd_probe import saved_tensors
from bankkeys import accepts, right_choices
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.checkpoint import (
    CheckpointPolicy,
    checkpoint,
    create_selective_checkpoint_contexts,
    set_checkpoint_early_stop,
)
from torch.utils.flop_counter import FlopCounterMode

TOPIC = "activation-memory"


def _right(qid: str) -> set[int]:
    return right_choices(TOPIC, qid)


def _accepts(qid: str, answer) -> bool:
    return accepts(TOPIC, qid, answer)


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
    assert _accepts("amem-forward-count", str(block.forward_calls))

    # code after the last op that saves a tensor does not rerun: the recomputation stops early
    class Counted(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin1, self.lin2 = nn.Linear(8, 8), nn.Linear(8, 8)
            self.started = self.finished = 0

        def forward(self, x):
            self.started += 1
            y = self.lin2(torch.relu(self.lin1(x)))
            self.finished += 1
            return y

    counted = Counted()
    checkpoint(counted, _x(4, 8), use_reentrant=False).sum().backward()
    assert (counted.started, counted.finished) == (2, 1)
    with set_checkpoint_early_stop(False):
        checkpoint(counted, _x(4, 8), use_reentrant=False).sum().backward()
    assert (counted.started, counted.finished) == (4, 3)


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
    assert _right("amem-checkpoint-dropout") == {3}


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
    assert _right("amem-reentrant-no-grad-input") == {1}


@pytest.mark.verifies("amem-sqrt-segments")
def test_best_segment_count_for_64_layers():
    n = 64
    peaks = {k: k + n // k for k in range(1, n + 1) if n % k == 0}
    best = min(peaks, key=peaks.get)
    assert best == 8 and _accepts("amem-sqrt-segments", str(peaks[best]))
    assert not _accepts("amem-sqrt-segments", str(n))  # no checkpointing at all
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


def _linear_backward_ops(**kwargs) -> list[str]:
    torch.manual_seed(0)
    block = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))  # biased: aten.addmm
    out = checkpoint(block, _x(8, 16), use_reentrant=False, **kwargs).sum()
    log = OpLog()
    with log:
        out.backward()
    return log.ops


def _policy(saved_ops):
    def policy(ctx, op, *args, **kwargs):
        return CheckpointPolicy.MUST_SAVE if op in saved_ops else CheckpointPolicy.PREFER_RECOMPUTE

    return functools.partial(create_selective_checkpoint_contexts, policy)


@pytest.mark.verifies("amem-selective")
def test_selective_policy_recomputes_only_what_it_does_not_save():
    mm, addmm = torch.ops.aten.mm.default, torch.ops.aten.addmm.default
    full = _backward_ops()
    selective = _backward_ops(context_fn=_policy({mm, addmm}))
    # backward of two matmuls needs 3 mm (grad w2, grad h, grad w1); plain checkpointing reruns the first
    assert full.count("aten.mm.default") == 4  # choice 0 describes this, not the policy's run
    assert selective.count("aten.mm.default") == 3  # choices 0 and 1: no matmul runs again
    assert selective.count("aten.relu.default") == 1  # choice 2; choice 3: not nothing
    # biased nn.Linear layers run aten.addmm: the prompt's policy keeps them too...
    assert "aten.addmm.default" in _linear_backward_ops()  # plain checkpointing reruns the first Linear
    linear_selective = _linear_backward_ops(context_fn=_policy({mm, addmm}))
    assert "aten.addmm.default" not in linear_selective and linear_selective.count("aten.relu.default") == 1
    # ...while a policy naming aten.mm alone would rerun them
    assert "aten.addmm.default" in _linear_backward_ops(context_fn=_policy({mm}))
    assert _right("amem-selective") == {2}


def _step_flops(blocks: list[nn.Module], use_checkpoint: bool) -> tuple[int, int]:
    """FLOPs of the forward pass alone and of a whole training step, each block maybe checkpointed."""
    x = _x(8, 32)
    with FlopCounterMode(display=False) as counter:
        h = x
        for block in blocks:
            h = checkpoint(block, h, use_reentrant=False) if use_checkpoint else block(h)
        forward = counter.get_total_flops()
        h.sum().backward()
    return forward, counter.get_total_flops()


@pytest.mark.verifies("amem-overhead")
def test_full_checkpointing_adds_one_forward_to_a_step():
    torch.manual_seed(0)
    blocks = [nn.Sequential(nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 32)) for _ in range(3)]
    forward, plain = _step_flops(blocks, False)
    assert plain == 3 * forward  # a matmul's backward costs twice its forward
    with set_checkpoint_early_stop(False):  # every block recomputed in full, as the cost model says
        _, full = _step_flops(blocks, True)
    percent = 100 * (full - plain) / plain
    assert _accepts("amem-overhead", f"{percent:.1f}")
    assert not _accepts("amem-overhead", f"{100 * (full - plain) / full:.1f}")  # 25: share of the new total
    assert not _accepts("amem-overhead", f"{percent / 100:.3f}")  # a fraction, not a percentage
    _, early = _step_flops(blocks, True)  # the default stops before each block's last matmul
    assert plain < early < full



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
    # eval() also switches BatchNorm to its running statistics and stops updating them
    bn = nn.BatchNorm1d(8).eval()
    before = bn.running_mean.clone()
    out = bn(x.detach() * 3 + 1)
    assert torch.equal(bn.running_mean, before) and not torch.allclose(out.mean(0), torch.zeros(8), atol=0.1)
    assert _right("amem-reduce-memory") == {0, 1}
