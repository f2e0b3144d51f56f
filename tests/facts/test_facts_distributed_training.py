"""Facts of questions/distributed-training.yaml, checked on one CPU process.

Collectives are simulated on lists of tensors (one per rank), and the samplers and conversions
that work without a group are called directly; the DDP bucket test starts a one-rank gloo group
to watch the buckets go out during backward.

Each verified single question's test settles every choice (`# choice N` beside the assertion, N
its index in the file) and then checks that the file's key is the one choice found true. In
dist-ddp-buckets, that each rank keeps the full averaged gradient rests on the PyTorch "Distributed
Data Parallel" notes and Li et al. (2020); the test shows the single-rank side of it. Numeric
questions compute the keyed value themselves.
"""

from __future__ import annotations

import tempfile

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
