"""Facts of questions/sharded-training.yaml, checked with torch on the CPU.

Two gloo ranks are forked once for the module (about half a second, plus the imports) to run the
real collectives, `ZeroRedundancyOptimizer` and FSDP2's `fully_shard`; ring traffic, tensor
parallelism and pipeline schedules are simulated on lists of tensors in one process.

Each verified single or multi question's test settles every choice it can (`# choice N` beside
the assertion, N its index in the file) and checks that the file's key is the set found true.
What rests on sources rather than on torch: in shard-zero1-what, that ZeRO's stage 2 and 3 shard
gradients and weights (choices 0 and 2) rests on the ZeRO paper (Rajbhandari et al., 2020); in
shard-fsdp-reshard, the equivalence with FSDP1's SHARD_GRAD_OP rests on the FullyShardedDataParallel
docs. Numeric questions compute their value (none copies the key) and check that the file's
tolerance takes it rounded as the prompt asks and rejects the usual slips.
"""

from __future__ import annotations

import multiprocessing
import tempfile
import warnings
from functools import cache

import pytest
import torch
import torch.distributed as dist
import torch.nn.functional as F
from bankkeys import accepts, right_choices
from torch import nn

TOPIC = "sharded-training"
WORLD = 2


def _right(qid: str) -> set[int]:
    return right_choices(TOPIC, qid)


def _takes(qid: str, value: float, places: int) -> bool:
    """Whether the file's key and tolerance accept value written with `places` decimals."""
    return accepts(TOPIC, qid, f"{value:.{places}f}")


def _collective(name: str):
    """torch renamed the flat-tensor collectives; take the new name where it exists."""
    new = {"reduce_scatter": "reduce_scatter_single", "all_gather": "all_gather_single"}[name]
    return getattr(dist, new, None) or getattr(dist, f"{name}_tensor")


def _rank_main(rank: int, store: str, results) -> None:
    """One rank's share of the group checks; everything sent back is plain Python data."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.optim import ZeroRedundancyOptimizer

    # the imports above are cached in the parent before forking, so they cost nothing here
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=WORLD)
    out: dict = {}
    try:
        # all-reduce against reduce-scatter then all-gather
        g = torch.arange(6.0) * (rank + 1) + 10 * rank
        reduced = g.clone()
        dist.all_reduce(reduced)
        shard = torch.empty(6 // WORLD)
        _collective("reduce_scatter")(shard, g.clone())
        gathered = torch.empty(6)
        _collective("all_gather")(gathered, shard)
        out["all_reduce"], out["shard"], out["gathered"] = reduced.tolist(), shard.tolist(), gathered.tolist()

        # ZeRO stage 1: each rank keeps Adam's state for its own parameters only
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 4))
        zero = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.Adam, lr=0.1)
        model(torch.randn(5, 8) + rank).sum().backward()
        for p in model.parameters():  # what DDP's all-reduce would have done
            dist.all_reduce(p.grad)
            p.grad /= WORLD
        zero.step()
        out["zero1_state_numel"] = sum(s["exp_avg"].numel() for s in zero.optim.state.values())
        out["zero1_param_numel"] = sum(p.numel() for p in model.parameters())
        out["zero1_grads_whole"] = all(p.grad.shape == p.shape for p in model.parameters())
        params = {id(p): p for p in model.parameters()}
        out["zero1_state_is_per_parameter"] = all(  # Adam's moments, shaped like the parameter they belong to
            id(p) in params and set(st) == {"step", "exp_avg", "exp_avg_sq"} and st["exp_avg"].shape == p.shape
            for p, st in zero.optim.state.items()
        )
        out["zero1_params"] = torch.cat([p.detach().flatten() for p in model.parameters()]).tolist()

        # FSDP2: what a block holds during and after forward, and the shape of grads and Adam state
        mesh = init_device_mesh("cpu", (WORLD,))
        for reshard in (None, False):  # None: fully_shard's own default
            torch.manual_seed(0)
            net = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8))
            fully_shard(net[0], mesh=mesh, **({} if reshard is None else {"reshard_after_forward": reshard}))
            fully_shard(net, mesh=mesh)
            seen = {}
            net[0].register_forward_pre_hook(lambda m, a: seen.update(during=tuple(m.weight.shape)))
            opt = torch.optim.Adam(net.parameters(), lr=0.1)
            y = net(torch.randn(4, 8) + rank)
            w = net[0].weight
            after = tuple(getattr(w, "_local_tensor", w).shape)
            root_after = tuple(getattr(net[1].weight, "_local_tensor", net[1].weight).shape)
            y.sum().backward()
            opt.step()
            local = lambda t: tuple(getattr(t, "_local_tensor", t).shape)  # noqa: E731
            out[f"fsdp_{reshard}"] = {
                "during_forward": seen["during"],
                "after_forward": after,
                "root_after_forward": root_after,
                "grad": local(net[0].weight.grad),
                "exp_avg": local(opt.state[net[0].weight]["exp_avg"]),
            }
    finally:
        dist.destroy_process_group()
    results.put((rank, out))


@cache
def _group_results() -> dict[int, dict]:
    if not dist.is_gloo_available() or "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs gloo and the fork start method")
    with warnings.catch_warnings():  # torch.distributed.optim imports torch.jit, which warns about itself
        warnings.simplefilter("ignore", DeprecationWarning)
        import torch.distributed.device_mesh  # noqa: F401  (imported once here, not once per rank)
        import torch.distributed.fsdp  # noqa: F401
        import torch.distributed.optim  # noqa: F401

    torch.optim.Adam([nn.Parameter(torch.zeros(1))])  # warm the optimizer's lazy imports too
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        procs = [ctx.Process(target=_rank_main, args=(r, f"{tmp}/store", results)) for r in range(WORLD)]
        for p in procs:
            p.start()
        got = dict(results.get(timeout=120) for _ in procs)
        for p in procs:
            p.join(timeout=30)
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
    return got


def _ring(buffers: list[torch.Tensor], gather_only: bool = False):
    """Ring reduce-scatter then all-gather over len(buffers) ranks; returns results and elements sent per rank."""
    n = len(buffers)
    chunks = [list(b.clone().chunk(n)) for b in buffers]
    sent = [0] * n
    if not gather_only:
        for step in range(n - 1):
            moves = [(r, (r - step) % n) for r in range(n)]
            payload = [chunks[r][c].clone() for r, c in moves]
            for (r, c), data in zip(moves, payload):
                chunks[(r + 1) % n][c] += data
                sent[r] += data.numel()
    rs_sent = list(sent)
    for step in range(n - 1):
        moves = [(r, (r + 1 - step) % n) for r in range(n)]
        payload = [chunks[r][c].clone() for r, c in moves]
        for (r, c), data in zip(moves, payload):
            chunks[(r + 1) % n][c] = data
            sent[r] += data.numel()
    return [torch.cat(c) for c in chunks], rs_sent, [s - a for s, a in zip(sent, rs_sent)]


def _model_state_bytes(mixed: bool) -> float:
    """Bytes per parameter of weights, gradients and AdamW state after a real step."""
    torch.manual_seed(0)
    master = nn.Linear(32, 16)
    opt = torch.optim.AdamW(master.parameters())
    if mixed:
        work = nn.Linear(32, 16).to(torch.bfloat16)
        work.load_state_dict(master.state_dict())
        work(torch.randn(4, 32, dtype=torch.bfloat16)).sum().backward()
        for m, w in zip(master.parameters(), work.parameters()):
            m.grad = w.grad.float()  # the fp32 copy of the gradient is transient, freed after the step
        opt.step()
        kept = list(work.parameters()) + [w.grad for w in work.parameters()] + list(master.parameters())
    else:
        master(torch.randn(4, 32)).sum().backward()
        opt.step()
        kept = list(master.parameters()) + [p.grad for p in master.parameters()]
    kept += [t for st in opt.state.values() for k, t in st.items() if k != "step"]
    n = sum(p.numel() for p in master.parameters())
    return sum(t.numel() * t.element_size() for t in kept) / n


BYTES = {"weights": torch.bfloat16.itemsize, "grads": torch.bfloat16.itemsize}


def _optimizer_bytes() -> int:
    return 3 * torch.float32.itemsize  # master copy, exp_avg, exp_avg_sq


def _per_gpu_gb(psi: float, stage: int, n: int) -> float:
    w, g, o = BYTES["weights"], BYTES["grads"], _optimizer_bytes()
    sharded = {0: 0, 1: o, 2: o + g, 3: o + g + w}[stage]
    return ((w + g + o - sharded) * psi + sharded * psi / n) / 1e9


@pytest.mark.verifies("shard-zero1-what")
def test_zero_redundancy_optimizer_shards_adam_state_only():
    ranks = _group_results()
    total = ranks[0]["zero1_param_numel"]
    states = [ranks[r]["zero1_state_numel"] for r in range(WORLD)]
    truth = {
        0: False,  # the gradients stay whole on every rank (stage 2 would shard them)
        1: sum(states) == total and all(0 < s < total for s in states),
        2: False,  # the parameters stay whole and identical, and the state is what is split
        3: False,  # nothing in the optimizer concerns activations
    }
    assert all(ranks[r]["zero1_grads_whole"] for r in range(WORLD))  # choice 0
    assert ranks[0]["zero1_params"] == ranks[1]["zero1_params"]  # choice 2
    assert all(s < total for s in states)  # choice 2: no rank holds the whole state
    assert all(ranks[r]["zero1_state_is_per_parameter"] for r in range(WORLD))  # choice 3: no activation state
    assert truth[1]  # choice 1
    assert {i for i, t in truth.items() if t} == _right("shard-zero1-what")
    # under torch.autocast the parameters and gradients stay fp32 and there is no master copy: the
    # optimizer state ZeRO-1 shards is Adam's two moments, 8 of the 16 bytes per parameter
    lin = nn.Linear(8, 8)
    opt = torch.optim.Adam(lin.parameters())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = lin(torch.randn(4, 8))
    out.float().sum().backward()
    opt.step()
    n = sum(p.numel() for p in lin.parameters())
    weights_and_grads = sum(p.numel() * p.element_size() + p.grad.numel() * p.grad.element_size() for p in lin.parameters())
    moments = sum(t.numel() * t.element_size() for st in opt.state.values() for k, t in st.items() if k != "step")
    assert (weights_and_grads / n, moments / n) == (8, 8)


@pytest.mark.verifies("shard-fp32-adamw-bytes")
def test_fp32_and_mixed_precision_adamw_both_keep_16_bytes_per_parameter():
    fp32, mixed = _model_state_bytes(mixed=False), _model_state_bytes(mixed=True)
    assert mixed == 16
    truth = {0: fp32 == 32, 1: fp32 == 20, 2: fp32 == 12, 3: fp32 == 16 == mixed}
    assert truth == {0: False, 1: False, 2: False, 3: True}  # choices 0, 1, 2, 3
    assert {i for i, t in truth.items() if t} == _right("shard-fp32-adamw-bytes")


@pytest.mark.verifies("shard-zero3-memory")
def test_zero3_memory_per_gpu():
    assert _model_state_bytes(mixed=True) == 16
    gb = _per_gpu_gb(13e9, stage=3, n=64)
    assert _takes("shard-zero3-memory", gb, 2) and _takes("shard-zero3-memory", gb, 6)
    unsharded = _per_gpu_gb(13e9, stage=0, n=64)
    assert unsharded == pytest.approx(208) and unsharded > 2 * 80  # more than twice an 80 GB H100
    assert not _takes("shard-zero3-memory", gb * 1e9 / 2**30, 2)  # GiB, not GB
    assert not _takes("shard-zero3-memory", _per_gpu_gb(13e9, stage=2, n=64), 2)  # weights left whole
    assert not _takes("shard-zero3-memory", 12 * 13e9 / 64 / 1e9, 2)  # optimizer state only


@pytest.mark.verifies("shard-rs-ag-is-ar")
def test_all_reduce_is_reduce_scatter_then_all_gather():
    ranks = _group_results()
    expected = (torch.arange(6.0) * 1 + torch.arange(6.0) * 2 + 10).tolist()
    assert ranks[0]["all_reduce"] == ranks[1]["all_reduce"] == expected
    assert ranks[0]["gathered"] == ranks[1]["all_reduce"]  # the two halves give the all-reduce
    # ring traffic per rank: DDP all-reduces the gradient; ZeRO-2 reduce-scatters the gradient,
    # then all-gathers the updated weights (a different buffer of the same size)
    n, size = 8, 8 * 64
    grads = [torch.randn(size, dtype=torch.float64) for _ in range(n)]
    weights = [torch.randn(size, dtype=torch.float64) for _ in range(n)]
    reduced, rs, ag = _ring(grads)
    assert all(torch.allclose(r, torch.stack(grads).sum(0)) for r in reduced)
    assert rs == ag == [size * (n - 1) // n] * n
    ddp = rs[0] + ag[0]
    zero2 = _ring(grads)[1][0] + _ring(weights, gather_only=True)[2][0]
    truth = {
        0: zero2 == ddp,
        1: False,  # the equality needs no change of dtype: both sides above are float64
        2: False,  # every rank needs every updated weight: only the all-gather provides them
        3: zero2 == ddp / 2,
    }
    assert grads[0].dtype == weights[0].dtype == torch.float64  # choice 1: same dtype on both sides
    assert len(ranks[0]["shard"]) < len(ranks[0]["gathered"])  # choice 2: a rank updates only its shard
    assert truth[0] and not truth[3]  # choices 0 and 3
    assert {i for i, t in truth.items() if t} == _right("shard-rs-ag-is-ar")


@pytest.mark.verifies("shard-reduce-scatter")
def test_reduce_scatter_leaves_each_rank_its_shard_of_the_sum():
    ranks = _group_results()
    total = ranks[0]["all_reduce"]
    assert ranks[0]["shard"] == total[:3] and ranks[1]["shard"] == total[3:]
    for spelling in ("Reduce-Scatter", "reduce scatter", "ReduceScatter", "reduce_scatter", "dist.reduce_scatter_single"):
        assert accepts(TOPIC, "shard-reduce-scatter", spelling), spelling
    for wrong in ("all-reduce", "all-gather", "scatter", "reduce"):
        assert not accepts(TOPIC, "shard-reduce-scatter", wrong), wrong
    # the explanation's names: the flat-tensor call is reduce_scatter_single, the old name a deprecated alias
    assert hasattr(dist, "reduce_scatter") and hasattr(dist, "reduce_scatter_single")
    assert "reduce_scatter_single" in getattr(dist.reduce_scatter_tensor, "__deprecated__", "")


@pytest.mark.verifies("shard-zero3-traffic")
def test_fsdp_full_shard_sends_three_halves_of_an_all_reduce():
    n, size = 8, 8 * 64
    buffers = [torch.randn(size, dtype=torch.float64) for _ in range(n)]
    _, rs, ag = _ring(buffers)
    _, _, ag_only = _ring(buffers, gather_only=True)
    per_element = (2 * ag_only[0] + rs[0]) / size  # all-gather forward + backward, reduce-scatter
    bf16_gb = 7e9 * torch.bfloat16.itemsize / 1e9
    sent = per_element * bf16_gb
    assert _takes("shard-zero3-traffic", sent, 2) and _takes("shard-zero3-traffic", sent, 6)
    assert per_element / ((rs[0] + ag[0]) / size) == pytest.approx(1.5)  # relative to DDP
    assert not _takes("shard-zero3-traffic", 3 * bf16_gb, 2)  # the (N - 1)/N of a ring left out
    assert not _takes("shard-zero3-traffic", (rs[0] + ag[0]) / size * bf16_gb, 2)  # DDP's volume
    assert not _takes("shard-zero3-traffic", sent * 2, 2)  # fp32 instead of bf16


@pytest.mark.verifies("shard-fsdp-reshard")
def test_reshard_after_forward_false_keeps_the_gathered_weights_until_backward():
    import inspect

    from torch.distributed.fsdp import fully_shard

    # the explanation's default: None, which means True for every module but the root
    assert inspect.signature(fully_shard).parameters["reshard_after_forward"].default is None
    ranks = _group_results()
    for r in range(WORLD):
        default, kept = ranks[r]["fsdp_None"], ranks[r]["fsdp_False"]
        assert default["during_forward"] == kept["during_forward"] == (8, 8)  # choice 2: full weights in forward
        assert default["after_forward"] == (8 // WORLD, 8)  # a block, by default, frees them after forward
        assert default["root_after_forward"] == (8, 8)  # the root, by default, keeps them
        assert kept["after_forward"] == (8, 8)  # choice 3: still gathered when backward starts
        assert kept["grad"] == default["grad"] == (8 // WORLD, 8)  # choice 0: grads still sharded
        assert kept["exp_avg"] == default["exp_avg"] == (8 // WORLD, 8)  # choice 1: Adam state sharded
    truth = {0: False, 1: False, 2: False, 3: True}
    assert {i for i, t in truth.items() if t} == _right("shard-fsdp-reshard")


def _column_parallel_grads(t: int = 2):
    torch.manual_seed(0)
    x = torch.randn(5, 6, dtype=torch.float64)
    w = torch.randn(6, 8, dtype=torch.float64)
    dy = torch.randn(5, 8, dtype=torch.float64)
    xf, wf = x.clone().requires_grad_(), w.clone().requires_grad_()
    (xf @ wf * dy).sum().backward()
    per_gpu = []
    for w_i, dy_i in zip(w.chunk(t, dim=1), dy.chunk(t, dim=1)):
        x_i, w_i = x.clone().requires_grad_(), w_i.clone().requires_grad_()
        (x_i @ w_i * dy_i).sum().backward()
        per_gpu.append((x_i.grad, w_i.grad))
    return xf.grad, wf.grad, per_gpu


@pytest.mark.verifies("shard-tp-backward-comm")
def test_column_parallel_input_gradient_is_a_sum_over_gpus():
    x_grad, w_grad, per_gpu = _column_parallel_grads()
    truth = {
        0: all(torch.allclose(xg, x_grad) for xg, _ in per_gpu),
        1: all(xg.shape != x_grad.shape for xg, _ in per_gpu),
        2: torch.allclose(sum(xg for xg, _ in per_gpu), x_grad),
        3: not torch.allclose(torch.cat([wg for _, wg in per_gpu], dim=1), w_grad),
    }
    assert truth == {0: False, 1: False, 2: True, 3: False}  # choices 0, 1, 2, 3
    assert {i for i, t in truth.items() if t} == _right("shard-tp-backward-comm")
    # a replicated LayerNorm under sequence parallelism: each GPU sees its chunk of the sequence, so
    # its weight gradient is partial and the group has to sum them
    torch.manual_seed(0)
    x = torch.randn(2, 6, 8, dtype=torch.float64)
    ln = nn.LayerNorm(8).double()
    (ln(x) * x).sum().backward()
    full = ln.weight.grad.clone()
    parts = []
    for chunk in x.chunk(2, dim=1):  # the sequence split over 2 GPUs
        ln.zero_grad()
        (ln(chunk) * chunk).sum().backward()
        parts.append(ln.weight.grad.clone())
    assert not torch.allclose(parts[0], full) and torch.allclose(parts[0] + parts[1], full)


@pytest.mark.verifies("shard-tp-forward-allreduce")
def test_tensor_parallel_layer_needs_sums_only_after_row_parallel_layers():
    torch.manual_seed(0)
    b, s, h, heads, t = 2, 5, 8, 4, 2
    dh = h // heads
    x = torch.randn(b, s, h, dtype=torch.float64)
    wq, wk, wv, wo = (torch.randn(h, h, dtype=torch.float64) for _ in range(4))
    w1, w2 = torch.randn(h, 4 * h, dtype=torch.float64), torch.randn(4 * h, h, dtype=torch.float64)

    def attention(q, k, v, n_heads):
        split = lambda z: z.view(b, s, n_heads, dh).transpose(1, 2)  # noqa: E731
        probs = torch.softmax(split(q) @ split(k).transpose(-1, -2) / dh**0.5, dim=-1)
        return probs, (probs @ split(v)).transpose(1, 2).reshape(b, s, n_heads * dh)

    full_probs, full_ctx = attention(x @ wq, x @ wk, x @ wv, heads)
    full_attn = full_ctx @ wo
    full_mlp = F.gelu(x @ w1) @ w2
    cols = lambda w: w.chunk(t, dim=1)  # noqa: E731
    rows = lambda w: w.chunk(t, dim=0)  # noqa: E731
    attn_parts, mlp_parts, local_ok = [], [], True
    for i in range(t):
        probs, ctx = attention(x @ cols(wq)[i], x @ cols(wk)[i], x @ cols(wv)[i], heads // t)
        # choices 1 and 4: each GPU's own heads need only its own q, k, v and give its heads' probabilities
        local_ok &= torch.allclose(probs, full_probs[:, i * heads // t : (i + 1) * heads // t])
        attn_parts.append(ctx @ rows(wo)[i])
        hidden = F.gelu(x @ cols(w1)[i])  # choice 3: the GeLU runs on the local slice, no exchange
        local_ok &= torch.allclose(hidden, F.gelu(x @ w1).chunk(t, dim=-1)[i])
        mlp_parts.append(hidden @ rows(w2)[i])
    truth = {
        0: torch.allclose(sum(attn_parts), full_attn) and not torch.allclose(attn_parts[0], full_attn),
        1: not local_ok,
        2: torch.allclose(sum(mlp_parts), full_mlp) and not torch.allclose(mlp_parts[0], full_mlp),
        3: not local_ok,
        4: not local_ok,
    }
    assert truth == {0: True, 1: False, 2: True, 3: False, 4: False}  # choices 0-4
    assert {i for i, t in truth.items() if t} == _right("shard-tp-forward-allreduce")


def _pipeline_bubble(p: int, m: int) -> float:
    """Idle share of a GPipe step (all forwards, then all backwards), one time unit per micro-batch and pass."""
    done: dict = {}
    for s in range(p):
        for j in range(m):
            done["f", s, j] = max(done.get(("f", s - 1, j), 0), done.get(("f", s, j - 1), 0)) + 1
    flush = done["f", p - 1, m - 1]
    for s in reversed(range(p)):
        for j in range(m):
            done["b", s, j] = max(done.get(("b", s + 1, j), flush), done.get(("b", s, j - 1), flush)) + 1
    step = max(done["b", s, m - 1] for s in range(p))
    return (step - 2 * m) / step


@pytest.mark.verifies("shard-pipeline-microbatches")
def test_smallest_micro_batch_count_for_a_ten_percent_bubble():
    m = next(m for m in range(1, 1000) if _pipeline_bubble(8, m) <= 0.10 + 1e-12)
    assert _takes("shard-pipeline-microbatches", m, 0)
    assert not _takes("shard-pipeline-microbatches", m - 1, 0) and not _takes("shard-pipeline-microbatches", m + 1, 0)
    assert _pipeline_bubble(8, m) == pytest.approx(7 / 70)
    assert _pipeline_bubble(8, m - 1) > 0.10


@pytest.mark.verifies("shard-70b-fits")
def test_which_layouts_fit_a_70b_model_in_80_gb():
    psi = 70e9
    per_gpu = {
        0: _per_gpu_gb(psi, stage=3, n=12),
        1: _per_gpu_gb(psi, stage=2, n=64),
        2: _per_gpu_gb(psi, stage=1, n=512),
        3: _per_gpu_gb(psi / 8, stage=1, n=8),  # tensor parallel 8, then ZeRO-1 over 8 replicas
        4: _per_gpu_gb(psi / 8, stage=0, n=1),  # a pipeline stage, replicated by DDP
    }
    assert [round(v, 1) for v in per_gpu.values()] == [93.3, 155.3, 281.6, 48.1, 140.0]
    assert {i for i, gb in per_gpu.items() if gb < 80} == _right("shard-70b-fits")  # choices 0-4


@pytest.mark.verifies("shard-plan-70b")
def test_which_70b_layouts_fit_on_64_h100s():
    assert _model_state_bytes(mixed=True) == 16  # bf16 weights and grads, fp32 master and two moments
    psi, gpu_gb = 70e9, 80
    total_tb = 16 * psi / 1e12
    assert total_tb == pytest.approx(1.12) and total_tb * 1e3 / gpu_gb == pytest.approx(14)
    fsdp_64 = _per_gpu_gb(psi, stage=3, n=64)
    assert fsdp_64 == pytest.approx(17.5)
    # hybrid sharding: shard inside the shard group, replicate across groups
    hsdp = {group: _per_gpu_gb(psi, stage=3, n=group) for group in (8, 16, 32)}
    assert hsdp[8] == pytest.approx(140) and hsdp[8] > gpu_gb  # within a node: does not fit
    assert hsdp[16] == pytest.approx(70)  # fits the states alone, no room for activations
    assert hsdp[32] == pytest.approx(35)
    # TP 8 inside a node, ZeRO-1 over the 8 data-parallel replicas: 35 GB + 13.1 GB
    tp_zero1 = _per_gpu_gb(psi / 8, stage=1, n=8)
    assert round(tp_zero1, 1) == 48.1
    assert 4 * psi / 8 / 1e9 == pytest.approx(35) and 12 * psi / 64 / 1e9 == pytest.approx(13.125)
    # FSDP traffic per GPU per forward-backward: two all-gathers and a reduce-scatter of 140 GB
    weights_gb = BYTES["weights"] * psi / 1e9
    assert weights_gb == pytest.approx(140)
    assert 3 * weights_gb * 63 / 64 == pytest.approx(413.4, abs=0.1)
