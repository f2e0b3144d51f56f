"""Facts of questions/compilation-throughput.yaml, checked with Dynamo, the FLOP counter and the DataLoader.

Dynamo runs with the "eager" backend or a counting backend, so no C++ or Triton compiler is
needed: graph breaks, guards and recompilations are Dynamo's, whatever the backend. FLOPs per token
come from `torch.utils.flop_counter`. CUDA graphs and host-device syncs need a GPU: those tests skip
without one (`torch.cuda.set_sync_debug_mode("error")` turns every sync into an error there).

Each verified single or multi question's test settles every choice it can (`# choice N` beside the
assertion, N its index in the file) and checks that the file's key is the set found true. What rests
on the PyTorch docs rather than on this CPU: in comp-cuda-graph-static, choices 0 and 2 (no allocation
on replay; static inputs are device tensors) rest on the CUDA semantics notes ("CUDA Graphs"); in
comp-item-sync, choice 1 (one number is copied) rests on the same notes. Numeric questions compute
their value from measured FLOPs per parameter and token, or from a simulated launch queue; none
copies the key, and each checks that the file's tolerance takes the value rounded as the prompt asks
and rejects the usual slips.
"""

from __future__ import annotations

import contextlib
import io
from functools import cache

import pytest
import torch
from bankkeys import accepts, right_choices
from torch import nn

TOPIC = "compilation-throughput"
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _right(qid: str) -> set[int]:
    return right_choices(TOPIC, qid)


def _takes(qid: str, value: float, places: int) -> bool:
    """Whether the file's key and tolerance accept value written with `places` decimals."""
    return accepts(TOPIC, qid, f"{value:.{places}f}")


def _breaks(fn, *args) -> int:
    import torch._dynamo as dynamo

    dynamo.reset()
    return dynamo.explain(fn)(*args).graph_break_count


class _CountingBackend:
    """A Dynamo backend that counts compilations and runs of the compiled graphs."""

    def __init__(self):
        self.compiles = 0
        self.runs = 0

    def __call__(self, gm, example_inputs):
        self.compiles += 1

        def run(*args):
            self.runs += 1
            return gm.forward(*args)

        return run


def _print_step(x):
    y = x + 1
    print("step")
    return y * 2


@pytest.mark.verifies("comp-print-graph-break")
def test_print_splits_the_graph_and_runs_every_call():
    import torch._dynamo as dynamo

    dynamo.reset()
    backend = _CountingBackend()
    compiled = torch.compile(_print_step, backend=backend)
    out = io.StringIO()
    calls = 3
    with contextlib.redirect_stdout(out):  # choice 1: no error without fullgraph
        results = [compiled(torch.ones(3)) for _ in range(calls)]
    truth = {
        0: out.getvalue().count("step") < calls,
        1: False,
        2: backend.compiles == 2 and backend.runs == 2 * calls and out.getvalue().count("step") == calls,
        3: backend.compiles == 1,
    }
    assert all(torch.equal(r, torch.full((3,), 4.0)) for r in results)
    assert truth == {0: False, 1: False, 2: True, 3: False}  # choices 0-3
    assert {i for i, t in truth.items() if t} == _right("comp-print-graph-break")


def _branch(x):
    if x.sum() > 0:
        x = x * 2
    return x + 1


def _item(x):
    scale = x.abs().max().item()
    return x / scale


def _loop(x):
    for _ in range(3):
        x = x * 2
    return x + 1


def _where(x):
    x = torch.where(x > 0, x, 0)
    return x + 1


def _print_only(x):
    x = x + 1
    print("step")
    return x * 2


@pytest.mark.verifies("comp-graph-break-causes")
def test_which_lines_break_the_graph():
    x = torch.randn(8)
    breaks = {i: _breaks(fn, x) > 0 for i, fn in enumerate([_branch, _item, _loop, _where, _print_only])}
    assert breaks == {0: True, 1: True, 2: False, 3: False, 4: True}  # choices 0-4
    assert {i for i, t in breaks.items() if t} == _right("comp-graph-break-causes")


def _compile_runs(sizes, **kwargs) -> _CountingBackend:
    import torch._dynamo as dynamo

    dynamo.reset()
    backend = _CountingBackend()
    f = torch.compile(lambda x: (x * 2).sum(0), backend=backend, **kwargs)
    for n in sizes:
        assert torch.allclose(f(torch.ones(n, 8)), torch.full((8,), 2.0 * n))
    return backend


@pytest.mark.verifies("comp-recompile-shapes")
def test_automatic_dynamic_shapes_recompile_once():
    import torch._dynamo as dynamo

    sizes = [4, 8, 16, 32]
    default = _compile_runs(sizes)
    static = _compile_runs(sizes, dynamic=False)
    truth = {
        0: default.compiles == 4,
        1: default.compiles == 2 and default.runs == 4,  # the 3rd and 4th calls run the dynamic graph
        2: default.compiles == 1,
        3: default.compiles == 2 and default.runs == 2,
    }
    assert truth == {0: False, 1: True, 2: False, 3: False}  # choices 0-3
    assert static.compiles == 4  # what choice 0 describes is dynamic=False
    assert dynamo.config.automatic_dynamic_shapes is True
    assert getattr(dynamo.config, "recompile_limit", None) == 8
    assert {i for i, t in truth.items() if t} == _right("comp-recompile-shapes")


@pytest.mark.verifies("comp-fullgraph")
def test_fullgraph_turns_a_break_into_an_error():
    import torch._dynamo as dynamo

    dynamo.reset()
    calls = []

    def fn(x):
        calls.append(1)  # runs only if Python executes the body
        y = x + 1
        print("step")
        return y * 2

    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    with pytest.raises(dynamo.exc.Unsupported) as raised, contextlib.redirect_stdout(io.StringIO()):
        compiled(torch.ones(3))
    truth = {
        0: False,  # no eager fallback: the call raised instead of returning
        1: False,  # and no pair of graphs was run
        2: "print" in str(raised.value) or "builtin" in str(raised.value),
        3: False,  # nothing was baked in: there is no compiled result at all
    }
    assert truth == {0: False, 1: False, 2: True, 3: False}  # choices 0-3
    assert {i for i, t in truth.items() if t} == _right("comp-fullgraph")


@pytest.mark.verifies("comp-reduce-overhead")
def test_reduce_overhead_means_cuda_graphs():
    from torch._inductor import config as inductor_config
    from torch._inductor import list_mode_options

    reduce_overhead = list_mode_options("reduce-overhead")
    added = set(reduce_overhead) - set(list_mode_options("default"))
    truth = {
        0: added == {"triton.cudagraphs"} and reduce_overhead["triton.cudagraphs"] is True,
        1: "max_autotune" in added,
        2: any(value is False for value in reduce_overhead.values()),  # nothing is turned down
        3: any("fus" in key for key in added),
    }
    assert inductor_config.epilogue_fusion is True  # choice 3: fusion is on in the default mode already
    assert list_mode_options("max-autotune").get("max_autotune") is True  # autotuning belongs there
    assert truth == {0: True, 1: False, 2: False, 3: False}  # choices 0-3
    assert {i for i, t in truth.items() if t} == _right("comp-reduce-overhead")


@pytest.mark.verifies("comp-cuda-graph-static")
@needs_cuda
def test_graph_replay_reads_the_captured_addresses():  # choices 1 and 3
    static_x = torch.zeros(16, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        static_y = static_x * 2  # warm-up outside the graph
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = static_x * 2
    new = torch.arange(16.0, device="cuda")
    x = new  # rebinding a name: the graph does not see it
    graph.replay()
    assert torch.equal(static_y, torch.zeros(16, device="cuda")) and not torch.equal(static_y, x * 2)
    static_x.copy_(new)  # copying into the captured address: it does
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(static_y, new * 2)


@pytest.mark.verifies("comp-item-sync")
def test_item_returns_a_real_float_and_leaves_compiled_code_alone():
    import torch._dynamo as dynamo

    dynamo.reset()
    backend = _CountingBackend()
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    compiled = torch.compile(model, backend=backend)
    # lr 0.1 on a batch of ones would zero the output in one step, and the last two losses would tie
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batch = torch.randn(2, 4)
    values = []
    for _ in range(3):
        loss = compiled(batch).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        values.append(loss.item())
    assert all(type(v) is float for v in values) and len(set(values)) == 3  # choice 2: real values
    assert backend.compiles == 1  # choice 3: changing loss values do not recompile the model
    assert _right("comp-item-sync") == {0}


@pytest.mark.verifies("comp-item-sync", "comp-sync-ops")
@needs_cuda
def test_which_calls_sync_with_the_gpu():
    x = torch.randn(1000, device="cuda")
    loss = (x**2).mean()
    h = torch.randn(1000).pin_memory()

    def syncs(fn) -> bool:
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            fn()
            return False
        except RuntimeError:
            return True
        finally:
            torch.cuda.set_sync_debug_mode("default")

    truth = {
        0: syncs(lambda: loss.item()),
        1: syncs(lambda: torch.nonzero(x)),
        2: syncs(lambda: x.sum()),
        3: syncs(lambda: h.to("cuda", non_blocking=True)),
        4: syncs(lambda: loss.detach()),
    }
    assert truth == {0: True, 1: True, 2: False, 3: False, 4: False}  # choices 0-4
    assert {i for i, t in truth.items() if t} == _right("comp-sync-ops")


@pytest.mark.verifies("comp-pin-memory-name")
def test_dataloader_pinning_and_prefetch_arguments():
    import inspect

    from torch.utils.data import DataLoader

    params = inspect.signature(DataLoader).parameters
    assert "pin_memory" in params and params["pin_memory"].default is False
    for spelling in ("pin_memory", "Pin_Memory=True", "pin_memory = True", "`pin_memory`"):
        assert accepts(TOPIC, "comp-pin-memory-name", spelling), spelling
    for wrong in ("non_blocking", "pinned", "persistent_workers"):
        assert not accepts(TOPIC, "comp-pin-memory-name", wrong), wrong
    assert DataLoader(list(range(8)), num_workers=2).prefetch_factor == 2  # the card's default
    assert DataLoader(list(range(8))).prefetch_factor is None


def _training_flops_per_param_token(checkpointed: bool, reentrant: bool = False) -> float:
    from torch.utils.checkpoint import checkpoint
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    blocks = nn.ModuleList(
        nn.Sequential(nn.Linear(32, 64, bias=False), nn.GELU(), nn.Linear(64, 32, bias=False)) for _ in range(3)
    )
    tokens = 16
    x = torch.randn(tokens, 32, requires_grad=True)  # stands for the embeddings, which need gradients
    with FlopCounterMode(display=False) as counter:
        h = x
        for block in blocks:
            h = checkpoint(block, h, use_reentrant=reentrant) if checkpointed else block(h)
        h.sum().backward()
    return counter.get_total_flops() / (sum(p.numel() for p in blocks.parameters()) * tokens)


@pytest.mark.verifies("comp-6n")
def test_six_flops_per_parameter_and_token_and_what_recomputation_adds():
    plain = _six()
    full = _training_flops_per_param_token(True, reentrant=True)
    partial = _training_flops_per_param_token(True, reentrant=False)
    assert plain == 6
    truth = {
        0: full == 8 and 6 < partial <= 8,
        1: False,  # MFU's numerator is the model's FLOPs: it stays 6N whatever is recomputed
        2: False,  # same 6N of useful work in a longer step: MFU falls
        3: full - 2 * 2 == 2,  # the total minus two forwards of 2N is the backward: 4N, not 2N
        4: False,  # recomputation is extra compute in backward; nothing in this step hides it
    }
    assert truth == {0: True, 1: False, 2: False, 3: False, 4: False}  # choices 0-4
    assert {i for i, t in truth.items() if t} == _right("comp-6n")


@cache
def _six() -> float:
    return _training_flops_per_param_token(False)


@pytest.mark.verifies("comp-tokens-from-mfu")
def test_tokens_per_second_from_mfu():
    tokens = 0.40 * 8 * 989e12 / (_six() * 7e9)
    assert _takes("comp-tokens-from-mfu", float(f"{tokens:.3g}"), 0) and _takes("comp-tokens-from-mfu", tokens, 0)
    assert not _takes("comp-tokens-from-mfu", tokens / 8, 0)  # one GPU's share
    assert not _takes("comp-tokens-from-mfu", tokens / 0.40, 0)  # the MFU left out
    assert not _takes("comp-tokens-from-mfu", tokens * 3, 0)  # 2N per token, forward only


@pytest.mark.verifies("comp-mfu-from-throughput")
def test_mfu_from_throughput():
    mfu = _six() * 1.3e9 * 12_000 / 312e12
    assert _takes("comp-mfu-from-throughput", 100 * mfu, 0) and _takes("comp-mfu-from-throughput", 100 * mfu, 4)
    assert not _takes("comp-mfu-from-throughput", mfu, 2)  # a fraction, not a percentage
    assert not _takes("comp-mfu-from-throughput", 100 * mfu / 3, 0)  # 2N per token, forward only


@pytest.mark.verifies("comp-training-days")
def test_training_days():
    days = _six() * 7e9 * 1e12 / (0.40 * 64 * 989e12) / 86_400
    assert _takes("comp-training-days", days, 1) and _takes("comp-training-days", days, 4)
    assert not _takes("comp-training-days", days * 0.40, 1)  # as if at 100% MFU
    assert not _takes("comp-training-days", days / 3, 1)  # 2N per token, forward only
    assert not _takes("comp-training-days", days * 40 / 30, 1)  # 30% MFU


def _gpu_busy_share(kernels: int, launch_us: float, gpu_ms: float) -> float:
    """The CPU launches kernels back to back; the GPU runs each once it is launched and the previous one is done."""
    run_us = gpu_ms * 1000 / kernels
    gpu_done = 0.0
    for i in range(kernels):
        gpu_done = max(gpu_done, (i + 1) * launch_us) + run_us
    return kernels * run_us / gpu_done


@pytest.mark.verifies("comp-launch-bound")
def test_launch_bound_step_keeps_the_gpu_busy_two_thirds_of_the_time():
    busy = 100 * _gpu_busy_share(3000, 6, 12)
    assert _takes("comp-launch-bound", busy, 1) and _takes("comp-launch-bound", busy, 3)
    assert 100 * _gpu_busy_share(3000, 2, 12) > 99  # with cheap launches the GPU is the limit instead
    assert not _takes("comp-launch-bound", 100 - busy, 1)  # the idle share
    assert not _takes("comp-launch-bound", 100 * 12 / (12 + 18), 1)  # launches and GPU work not overlapped
    assert not _takes("comp-launch-bound", 100 * 18 / 12, 1)  # the ratio upside down


@pytest.mark.verifies("comp-compile-no-faster")
def test_graph_breaks_recompiles_and_the_recompile_limit():
    import logging

    import torch._dynamo as dynamo

    def with_item(x):
        y = x * 2
        if y.sum().item() > 0:  # .item() then a Python branch on it
            return y + 1
        return y - 1

    assert _breaks(with_item, torch.ones(4)) >= 1
    dynamo.reset()
    with pytest.raises((dynamo.exc.Unsupported, dynamo.exc.UserError)):  # fullgraph: the break is an error
        torch.compile(with_item, backend="eager", fullgraph=True)(torch.ones(4))

    def compiles(fn, calls, **kwargs) -> _CountingBackend:
        dynamo.reset()
        backend = _CountingBackend()
        compiled = torch.compile(fn, backend=backend, **kwargs)
        for args in calls:
            compiled(*args)
        return backend

    x = torch.ones(4, 8)
    # a Python int or float that changes: one recompile, then it is dynamic
    assert compiles(lambda t, n: t * n, [(x, n) for n in (2, 3, 4, 5)]).compiles == 2
    assert compiles(lambda t, n: t * n, [(x, n) for n in (2.0, 3.5, 4.25, 5.1)]).compiles == 2
    assert compiles(lambda t, n: t * n, [(x, torch.tensor(n)) for n in (2.0, 3.5, 4.25)]).compiles == 1
    # train/eval: one graph per mode, reused when toggling back
    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.1))
    dynamo.reset()
    backend = _CountingBackend()
    compiled = torch.compile(model, backend=backend)
    for mode in ("train", "eval", "train", "eval"):
        getattr(model, mode)()
        compiled(x)
    assert backend.compiles == 2
    # past the recompile limit (8) the function runs eagerly: no more compiles, no compiled runs
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)  # the limit is announced as a log warning
    try:
        static = compiles(lambda t: (t * 2).sum(0), [(torch.ones(n, 8),) for n in range(1, 13)], dynamic=False)
    finally:
        logging.getLogger("torch._dynamo").setLevel(logging.NOTSET)
    assert dynamo.config.recompile_limit == 8
    assert static.compiles == 8 and static.runs == 8  # calls 9 to 12 ran eagerly


@pytest.mark.verifies("comp-input-pipeline-card")
def test_dataloader_workers_prefetch_and_persistence():
    import os

    from torch.utils.data import DataLoader

    assert DataLoader(list(range(8)), num_workers=2).prefetch_factor == 2  # per worker, by default
    assert DataLoader(list(range(8))).prefetch_factor is None  # num_workers=0: loading in this process
    with pytest.raises(ValueError, match="prefetch_factor"):
        DataLoader(list(range(8)), prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers"):
        DataLoader(list(range(8)), persistent_workers=True)

    class Pids(torch.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return os.getpid()

    def pids_per_epoch(persistent: bool) -> list[set[int]]:
        loader = DataLoader(Pids(), batch_size=2, num_workers=1, persistent_workers=persistent)
        return [set(torch.cat(list(loader)).tolist()) for _ in range(2)]

    assert pids_per_epoch(False)[0].isdisjoint({os.getpid()})  # the batches come from a worker process
    first, second = pids_per_epoch(True)
    assert first == second  # persistent: the same worker serves every epoch
    first, second = pids_per_epoch(False)
    assert first != second  # otherwise a fresh worker is started every epoch
