"""Facts of questions/distributed-training.yaml, checked on one CPU process.

Collectives are simulated on lists of tensors (one per rank), and the samplers and conversions
that work without a group are called directly; the DDP bucket test starts a one-rank gloo group
to watch the buckets go out during backward, and the DDP and FSDP2 cards run on two forked gloo
ranks (single-threaded, since a forked child must not enter OpenMP after its parent has).

Each verified single question's test settles every choice (`# choice N` beside the assertion, N
its index in the file) and then checks that the file's key is the one choice found true. In
dist-ddp-buckets, that each rank keeps the full averaged gradient rests on the PyTorch "Distributed
Data Parallel" notes and Li et al. (2020); the test shows the single-rank side of it. Numeric
questions compute the keyed value themselves.
"""

from __future__ import annotations

import inspect
import os
import tempfile
from functools import cache

import pytest
import torch
import torch.nn.functional as F
from bankkeys import right_choices, topic_questions
from torch import nn
from torch.utils.data import DistributedSampler

from quizapp.bank.answers import check_answer

TOPIC = "distributed-training"



@pytest.mark.verifies("dist-ddp-buckets")
def test_ddp_default_bucket_sizes():
    import torch.distributed as dist
    import torch.nn.parallel.distributed as ddp_module

    assert ddp_module._DEFAULT_BUCKET_CAP_MB == 25
    assert dist._DEFAULT_FIRST_BUCKET_BYTES == 1024 * 1024


@pytest.mark.verifies("dist-ddp-buckets")
def test_ddp_buckets_go_out_during_backward_in_full_precision():
    import torch.distributed as dist

    if not dist.is_gloo_available() or dist.is_initialized():
        pytest.skip("needs gloo and no process group of its own")
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method=f"file://{tmp}/store", rank=0, world_size=1)
        try:
            torch.manual_seed(0)
            layers = [nn.Linear(256, 256) for _ in range(4)]
            model = nn.Sequential(*layers)
            ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.3)
            events = []

            def record(state, bucket):
                events.append(("bucket", bucket.buffer().dtype, [p for p in bucket.parameters()]))
                fut = torch.futures.Future()
                fut.set_result(bucket.buffer())
                return fut

            ddp.register_comm_hook(None, record)
            layers[0].weight.register_hook(lambda g: events.append(("first layer's gradient",)))
            x = torch.randn(8, 256)
            for _ in range(3):  # DDP settles its bucket order after the first iteration
                events.clear()
                model.zero_grad()
                ddp(x).sum().backward()
        finally:
            dist.destroy_process_group()

    buckets = [e for e in events if e[0] == "bucket"]
    # choice 3: true. Several buckets, and the first goes out before backward reaches the first layer
    assert len(buckets) >= 2
    assert events[0][0] == "bucket" and events.index(("first layer's gradient",)) < len(events) - 1
    # choice 1: false. Every parameter is in a bucket on every step, though x (and so the gradient) repeats
    bucketed = {id(p) for b in buckets for p in b[2]}
    assert bucketed == {id(p) for p in model.parameters()}
    # choice 2: false. The buckets keep the gradients' dtype
    assert all(b[1] == torch.float32 for b in buckets)
    # choice 0: false (single-rank side). Every parameter keeps its whole gradient after backward
    assert all(p.grad is not None and p.grad.shape == p.shape for p in model.parameters())
    assert right_choices(TOPIC, "dist-ddp-buckets") == {3}


@pytest.mark.verifies("dist-set-epoch")
def test_without_set_epoch_every_epoch_has_the_same_order():
    data = list(range(40))
    samplers = [DistributedSampler(data, num_replicas=4, rank=r, shuffle=True, seed=0) for r in range(4)]
    first = [list(s) for s in samplers]
    again = [list(s) for s in samplers]
    assert first == again  # choice 0: true, same order and same split, epoch after epoch
    assert first[0] != sorted(first[0])  # choice 2: false, it is shuffled, just never reshuffled
    for epoch_shards in (first, again):
        everything = [i for shard in epoch_shards for i in shard]
        assert sorted(everything) == data  # choice 1 and choice 3: false, disjoint shards that cover the data
    for s in samplers:
        s.set_epoch(1)
    reshuffled = [list(s) for s in samplers]
    assert reshuffled != first
    assert sorted(i for shard in reshuffled for i in shard) == data
    # a dataset that does not divide by the rank count: the only repeats are the padding
    odd = list(range(42))
    shards = [list(DistributedSampler(odd, num_replicas=4, rank=r, shuffle=True, seed=0)) for r in range(4)]
    everything = [i for shard in shards for i in shard]
    assert set(everything) == set(odd) and len(everything) - len(set(everything)) == 4 * 11 - 42
    assert right_choices(TOPIC, "dist-set-epoch") == {0}


@pytest.mark.verifies("dist-sampler-padding")
def test_distributed_sampler_pads_by_repeating_indices():
    data = list(range(1003))
    shards = [list(DistributedSampler(data, num_replicas=8, rank=r, shuffle=False)) for r in range(8)]
    assert all(len(s) == 126 for s in shards)
    handed_out = [i for s in shards for i in s]
    assert len(handed_out) == 1008
    assert len(handed_out) - len(set(handed_out)) == topic_questions(TOPIC)["dist-sampler-padding"].answer
    assert set(handed_out) == set(data)
    dropped = [list(DistributedSampler(data, num_replicas=8, rank=r, shuffle=False, drop_last=True)) for r in range(8)]
    assert all(len(s) == 125 for s in dropped)
    seen = {i for s in dropped for i in s}
    assert len(seen) == 1000 and len(data) - len(seen) == 3


def _ring_all_reduce(buffers: list[torch.Tensor]) -> tuple[list[torch.Tensor], list[int]]:
    """Bandwidth-optimal ring all-reduce among len(buffers) simulated ranks.

    Returns the reduced buffers and the number of elements each rank sent.
    """
    n = len(buffers)
    chunks = [list(b.clone().chunk(n)) for b in buffers]
    sent = [0] * n
    # reduce-scatter: at step s, rank r sends chunk (r - s) % n to rank r + 1, which adds it
    for step in range(n - 1):
        msgs = [(r, (r - step) % n, chunks[r][(r - step) % n].clone()) for r in range(n)]
        for r, c, payload in msgs:
            sent[r] += payload.numel()
            chunks[(r + 1) % n][c] += payload
    # now rank r holds the full sum of chunk (r + 1) % n; all-gather passes them around
    for step in range(n - 1):
        msgs = [(r, (r + 1 - step) % n, chunks[r][(r + 1 - step) % n].clone()) for r in range(n)]
        for r, c, payload in msgs:
            sent[r] += payload.numel()
            chunks[(r + 1) % n][c] = payload
    return [torch.cat(c) for c in chunks], sent


@pytest.mark.verifies("dist-ring-allreduce")
def test_ring_all_reduce_sends_2_n_minus_1_over_n_of_the_buffer():
    torch.manual_seed(0)
    n, size = 8, 8 * 1000
    buffers = [torch.randn(size, dtype=torch.float64) for _ in range(n)]
    reduced, sent = _ring_all_reduce(buffers)
    total = torch.stack(buffers).sum(0)
    for r in range(n):
        assert torch.allclose(reduced[r], total)
    assert all(s == 2 * (n - 1) * size // n for s in sent)
    assert sent[0] / size == topic_questions(TOPIC)["dist-ring-allreduce"].answer  # 1 GB buffer on 8 GPUs, in GB


def _gpipe_idle_fraction(p: int, m: int) -> float:
    """Simulate a GPipe step (all forwards, then all backwards), one time unit per micro-batch."""
    fwd_end = [[0] * m for _ in range(p)]
    for s in range(p):
        for j in range(m):
            ready = max(fwd_end[s - 1][j] if s else 0, fwd_end[s][j - 1] if j else 0)
            fwd_end[s][j] = ready + 1
    flush = fwd_end[p - 1][m - 1]
    bwd_end = [[0] * m for _ in range(p)]
    for s in reversed(range(p)):
        for j in range(m):
            ready = max(bwd_end[s + 1][j] if s < p - 1 else flush, bwd_end[s][j - 1] if j else 0)
            bwd_end[s][j] = ready + 1
    step_time = max(bwd_end[s][m - 1] for s in range(p))
    busy = 2 * m  # per stage
    return (step_time - busy) / step_time


@pytest.mark.verifies("dist-pipeline-bubble")
def test_pipeline_bubble_fraction():
    assert _gpipe_idle_fraction(4, 8) == pytest.approx(3 / 11)
    assert _gpipe_idle_fraction(4, 8) == pytest.approx(topic_questions(TOPIC)["dist-pipeline-bubble"].answer, rel=1e-3)
    for p, m in [(2, 1), (4, 32), (8, 8), (3, 5)]:
        assert _gpipe_idle_fraction(p, m) == pytest.approx((p - 1) / (m + p - 1))
    assert _gpipe_idle_fraction(4, 32) == pytest.approx(3 / 35)
    # two or more decimal places, or the fraction, pass; Megatron's (p - 1) / m and p / m do not
    q = topic_questions(TOPIC)["dist-pipeline-bubble"]
    bubble = _gpipe_idle_fraction(4, 8)
    assert all(check_answer(q, f"{bubble:.{places}f}").correct for places in (2, 3, 4))
    assert check_answer(q, "3/11").correct
    assert not check_answer(q, "0.375").correct and not check_answer(q, "0.5").correct


@pytest.mark.verifies("dist-zero-memory")
def test_zero_stage_2_memory_per_gpu():
    # Adam keeps two fp32 tensors per parameter: with the fp32 master copy that is 12 bytes.
    layer = nn.Linear(16, 8)
    opt = torch.optim.Adam(layer.parameters())
    layer(torch.randn(4, 16)).sum().backward()
    opt.step()
    n_params = sum(p.numel() for p in layer.parameters())
    state_bytes = sum(
        t.numel() * t.element_size()
        for st in opt.state.values()
        for k, t in st.items()
        if k in ("exp_avg", "exp_avg_sq")
    )
    assert state_bytes == 8 * n_params
    assert all(st["exp_avg"].dtype == torch.float32 for st in opt.state.values())
    master = 4
    k_opt = master + state_bytes // n_params
    fp16 = torch.empty(0, dtype=torch.float16).element_size()
    assert (k_opt, fp16) == (12, 2)

    psi, n = 7.5e9, 64
    per_gpu = {
        "ddp": (2 * fp16 + k_opt) * psi,
        "stage1": 2 * fp16 * psi + k_opt * psi / n,
        "stage2": fp16 * psi + (fp16 + k_opt) * psi / n,
        "stage3": (2 * fp16 + k_opt) * psi / n,
    }
    gb = {k: v / 1e9 for k, v in per_gpu.items()}
    assert gb["stage2"] == pytest.approx(16.640625)
    assert gb["stage2"] == pytest.approx(topic_questions(TOPIC)["dist-zero-memory"].answer, abs=0.01)
    assert gb["ddp"] == pytest.approx(120)
    assert round(gb["stage1"], 1) == 31.4 and round(gb["stage3"], 1) == 1.9
    # one or more decimal places pass; the other stages and GiB instead of GB do not
    q = topic_questions(TOPIC)["dist-zero-memory"]
    assert all(check_answer(q, f"{gb['stage2']:.{places}f}").correct for places in (1, 2, 3))
    wrong = [gb["stage1"], gb["stage3"], gb["ddp"], per_gpu["stage2"] / 2**30, fp16 * psi / 1e9]
    assert not any(check_answer(q, f"{w:.2f}").correct for w in wrong)


@pytest.mark.verifies("dist-sync-bn")
def test_sync_batchnorm_conversion_and_global_statistics():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    model[1].running_mean.fill_(0.5)
    model[1].weight.data.fill_(2.0)
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(converted[1], nn.SyncBatchNorm)
    assert torch.equal(converted[1].running_mean, torch.full((4,), 0.5))
    assert torch.equal(converted[1].weight.data, torch.full((4,), 2.0))

    # What SyncBN computes: each rank normalises with the global batch's mean and variance,
    # gathered from per-rank statistics, which equals BN on the concatenated batch.
    ranks = [torch.randn(2, 4, 5, 5) * (r + 1) + r for r in range(4)]
    full = torch.cat(ranks)
    bn = nn.BatchNorm2d(4, affine=False)
    expected = bn(full)
    counts = torch.tensor([x.numel() / x.shape[1] for x in ranks])
    means = torch.stack([x.mean(dim=(0, 2, 3)) for x in ranks])
    sq = torch.stack([(x**2).mean(dim=(0, 2, 3)) for x in ranks])
    g_mean = (means * counts[:, None]).sum(0) / counts.sum()
    g_var = (sq * counts[:, None]).sum(0) / counts.sum() - g_mean**2
    synced = [(x - g_mean[None, :, None, None]) / torch.sqrt(g_var[None, :, None, None] + bn.eps) for x in ranks]
    assert torch.allclose(torch.cat(synced), expected, atol=1e-4)
    local = [F.batch_norm(x, None, None, training=True) for x in ranks]
    assert not torch.allclose(torch.cat(local), expected, atol=1e-2)


@pytest.mark.verifies("dist-tensor-parallel")
def test_column_then_row_parallel_mlp():
    torch.manual_seed(0)
    h, t = 8, 2
    x = torch.randn(5, h, dtype=torch.float64)
    w1 = torch.randn(h, 4 * h, dtype=torch.float64)
    w2 = torch.randn(4 * h, h, dtype=torch.float64)
    y = F.gelu(x @ w1) @ w2

    w1_cols = w1.chunk(t, dim=1)  # column-parallel
    w2_rows = w2.chunk(t, dim=0)  # row-parallel
    partials = [F.gelu(x @ a) @ b for a, b in zip(w1_cols, w2_rows)]  # no communication inside
    assert partials[0].shape == y.shape
    assert torch.allclose(sum(partials), y)  # one all-reduce (sum) gives the output
    assert not torch.allclose(partials[0], y)

    # Row-splitting W1 would give partial sums, and GeLU does not distribute over a sum.
    x_parts, w1_rows = x.chunk(t, dim=1), w1.chunk(t, dim=0)
    pre = [xp @ wr for xp, wr in zip(x_parts, w1_rows)]
    assert torch.allclose(sum(pre), x @ w1)
    assert not torch.allclose(sum(F.gelu(p) for p in pre), F.gelu(x @ w1))


WORLD = 2


def _local(t: torch.Tensor) -> torch.Tensor:
    """A DTensor's shard on this rank, or the tensor itself."""
    return t.to_local() if hasattr(t, "to_local") else t


def _rank_main(rank: int, store: str, results) -> None:
    """One rank of a two-rank gloo group: DDP and FSDP2 on CPU; only plain Python data goes back."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    # a forked child must not enter OpenMP once the parent has used it (it can hang): run serially
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=WORLD)
    out: dict = {}
    try:
        # DDP: every process initialises its own, different weights
        torch.manual_seed(rank)
        net = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
        out["own_init"] = net[0].weight.detach().tolist()
        ddp = nn.parallel.DistributedDataParallel(net)
        out["after_wrap"] = net[0].weight.detach().tolist()
        out["forward_sync_buffers"] = ddp.forward_sync_buffers  # the default (broadcast_buffers before 2.13)
        x = torch.randn(8, 4, generator=torch.Generator().manual_seed(10 + rank)) * (rank + 1) + rank
        alone = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
        alone.load_state_dict(net.state_dict())
        alone(x).sum().backward()  # this rank's own gradient, without DDP
        out["own_grad"] = alone[0].weight.grad.tolist()
        ddp(x).sum().backward()
        out["ddp_grad"] = net[0].weight.grad.tolist()
        torch.optim.SGD(ddp.parameters(), lr=0.1).step()
        out["after_step"] = net[0].weight.detach().tolist()
        out["running_mean_after_forward"] = net[1].running_mean.tolist()  # each rank updated its own
        seen = {}
        hook = net[1].register_forward_pre_hook(lambda m, a: seen.update(rm=m.running_mean.tolist()))
        ddp(x)
        hook.remove()
        out["running_mean_in_next_forward"] = seen["rm"]

        # FSDP2: one unit per linear, then the root; the same initial model on every rank
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4))
        reference = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4))
        reference.load_state_dict(model.state_dict())
        mesh = init_device_mesh("cpu", (WORLD,))
        fully_shard(model[0], mesh=mesh)
        fully_shard(model[2], mesh=mesh)
        fully_shard(model, mesh=mesh)
        out["fsdp_stored"] = tuple(_local(model[0].weight).shape)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.1)  # built after sharding
        during = {}
        model[0].register_forward_pre_hook(lambda m, a: during.update(shape=tuple(m.weight.shape)))
        xb = torch.randn(6, 8, generator=torch.Generator().manual_seed(20 + rank))
        y = model(xb)
        out["fsdp_during_forward"] = during["shape"]
        out["fsdp_after_forward"] = tuple(_local(model[0].weight).shape)
        y.sum().backward()
        out["fsdp_grad"] = _local(model[0].weight.grad).tolist()
        reference(xb).sum().backward()
        out["fsdp_own_full_grad"] = reference[0].weight.grad.tolist()
        optimizer.step()
        out["fsdp_exp_avg"] = tuple(_local(optimizer.state[model[0].weight]["exp_avg"]).shape)
    finally:
        dist.destroy_process_group()
    results.put((rank, out))
    results.close()
    results.join_thread()
    # leave at once: DDP's reducer can deadlock in its destructor when the function returns
    os._exit(0)


@cache
def _group_results() -> dict[int, dict]:
    import multiprocessing
    import warnings

    import torch.distributed as dist

    if not dist.is_gloo_available() or "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs gloo and the fork start method")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        # DDP's constructor imports Dynamo lazily (seconds): import it once here, before forking
        import torch._dynamo  # noqa: F401
        import torch.distributed.device_mesh  # noqa: F401
        import torch.distributed.fsdp  # noqa: F401
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


@pytest.mark.verifies("dist-ddp-how")
def test_ddp_starts_equal_averages_gradients_and_stays_equal():
    r0, r1 = (_group_results()[r] for r in range(WORLD))
    assert r0["own_init"] != r1["own_init"]  # each process initialised its own weights...
    assert r0["after_wrap"] == r1["after_wrap"] == r0["own_init"]  # ...and DDP broadcast rank 0's
    assert r0["own_grad"] != r1["own_grad"]  # different data on each rank
    average = ((torch.tensor(r0["own_grad"]) + torch.tensor(r1["own_grad"])) / WORLD).tolist()
    assert r0["ddp_grad"] == r1["ddp_grad"]  # the same gradient on every rank
    assert torch.allclose(torch.tensor(r0["ddp_grad"]), torch.tensor(average), atol=1e-6)  # the average
    assert r0["after_step"] == r1["after_step"]  # the same step keeps the replicas equal
    # buffers: each rank's forward updates its own BN statistics, and the next forward starts from rank 0's
    assert r0["running_mean_after_forward"] != r1["running_mean_after_forward"]
    assert r0["running_mean_in_next_forward"] == r1["running_mean_in_next_forward"] == r0["running_mean_after_forward"]
    assert r0["forward_sync_buffers"] is True
    assert "forward_sync_buffers" in inspect.signature(nn.parallel.DistributedDataParallel).parameters
    # the sampler: disjoint shards covering the dataset, reshuffled by set_epoch
    data = list(range(32))
    samplers = [DistributedSampler(data, num_replicas=8, rank=r, shuffle=True, seed=0) for r in range(8)]
    first = [list(s) for s in samplers]
    assert sorted(i for shard in first for i in shard) == data
    for s in samplers:
        s.set_epoch(1)
    assert [list(s) for s in samplers] != first


@pytest.mark.verifies("dist-fsdp")
def test_fsdp_gathers_for_compute_and_keeps_shards_of_weights_gradients_and_adam_state():
    from torch.distributed.fsdp import ShardingStrategy, fully_shard

    ranks = _group_results()
    average = sum(torch.tensor(ranks[r]["fsdp_own_full_grad"]) for r in range(WORLD)) / WORLD
    for r in range(WORLD):
        got = ranks[r]
        assert got["fsdp_stored"] == (8 // WORLD, 8)  # each rank stores a shard (dim 0)...
        assert got["fsdp_during_forward"] == (8, 8)  # ...all-gathered into the full weight to compute
        assert got["fsdp_after_forward"] == (8 // WORLD, 8)  # and freed again after the unit's forward
        # reduce-scatter: each rank keeps its rows of the gradient averaged over the ranks
        assert torch.allclose(torch.tensor(got["fsdp_grad"]), average.chunk(WORLD)[r], atol=1e-6)
        assert got["fsdp_exp_avg"] == (8 // WORLD, 8)  # Adam's state is sharded too
    assert {"FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD"} <= set(ShardingStrategy.__members__)
    assert "reshard_after_forward" in inspect.signature(fully_shard).parameters
    # 16 bytes per parameter with mixed-precision Adam: 7B -> 112 GB, 14 GB per GPU over 8
    assert 16 * 7e9 / 1e9 == 112 and 16 * 7e9 / 8 / 1e9 == 14
    # traffic per parameter: 2 all-gathers + 1 reduce-scatter (Ψ each) against DDP's all-reduce (2Ψ)
    assert (2 + 1) / 2 == 1.5


@pytest.mark.verifies("dist-checkpointing-vs-sharding")
def test_model_states_ignore_the_batch_and_checkpointing_keeps_block_inputs():
    from autograd_probe import activation_bytes, saved_tensors
    from torch.utils.checkpoint import checkpoint, set_checkpoint_early_stop
    from torch.utils.flop_counter import FlopCounterMode

    def build():
        torch.manual_seed(0)
        return nn.Sequential(*[nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 16)) for _ in range(4)])

    def model_state_bytes(model, batch):
        opt = torch.optim.AdamW(model.parameters())
        model(torch.randn(batch, 16)).sum().backward()
        opt.step()
        tensors = [*model.parameters(), *(p.grad for p in model.parameters())]
        tensors += [t for st in opt.state.values() for k, t in st.items() if k != "step"]
        return sum(t.numel() * t.element_size() for t in tensors)

    assert model_state_bytes(build(), 4) == model_state_bytes(build(), 64)  # states do not depend on the batch
    model = build()
    small, large = activation_bytes(model, torch.randn(4, 16)), activation_bytes(model, torch.randn(64, 16))
    assert large == 16 * small  # activations grow with the batch

    # checkpointing each block keeps only the blocks' inputs, and gives the same gradients
    x = torch.randn(8, 16, requires_grad=True)
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}

    def run(ckpt: bool):
        h = x
        for block in model:
            h = checkpoint(block, h, use_reentrant=False) if ckpt else block(h)
        return h

    kept = [t for t in saved_tensors(run, True) if t.untyped_storage().data_ptr() not in params]
    assert [tuple(t.shape) for t in kept] == [(8, 16)] * len(model)
    plain_kept = [t for t in saved_tensors(run, False) if t.untyped_storage().data_ptr() not in params]
    assert sum(t.numel() for t in plain_kept) > 5 * sum(t.numel() for t in kept)
    def step(ckpt: bool):
        model.zero_grad()
        with FlopCounterMode(display=False) as counter:
            run(ckpt).square().sum().backward()
        return [p.grad.clone() for p in model.parameters()], counter.get_total_flops()

    plain_grads, plain_flops = step(False)
    ckpt_grads, ckpt_flops = step(True)
    assert all(torch.allclose(a, b) for a, b in zip(plain_grads, ckpt_grads))  # same gradients
    # forward 1 + backward 2 = 3 units; recomputation adds at most one forward, a third more. The
    # non-reentrant version stops once the last tensor backward needs is rebuilt, so here each
    # block's final matmul (half its forward) is not rerun
    assert ckpt_flops / plain_flops == pytest.approx(7 / 6)
    with set_checkpoint_early_stop(False):
        assert step(True)[1] / plain_flops == pytest.approx(4 / 3)


@pytest.mark.verifies("dist-sync-bn")
def test_sync_batchnorm_falls_back_without_a_group_and_needs_gpu_tensors_inside_one():
    import torch.distributed as dist

    torch.manual_seed(0)
    x = torch.randn(6, 4, 5, 5)
    bn = nn.BatchNorm2d(4)
    sync = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2d(4)))[0]
    assert not dist.is_initialized()
    assert torch.allclose(sync(x), bn(x))  # no process group: plain BN, running statistics updated alike
    assert torch.allclose(sync.running_mean, bn.running_mean)
    if not dist.is_gloo_available():
        pytest.skip("needs gloo")
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method=f"file://{tmp}/store", rank=0, world_size=1)
        try:
            with pytest.raises(ValueError, match="GPU"):  # training mode inside a group: GPU tensors only
                sync(x)
            sync.eval()
            bn.eval()
            assert torch.allclose(sync(x), bn(x))  # eval: running statistics, no communication
        finally:
            dist.destroy_process_group()
