"""Facts of questions/distributed-training.yaml, checked on one CPU process.

No process group is started: collectives are simulated on lists of tensors (one per rank), and the
samplers and conversions that work without a group are called directly.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DistributedSampler


@pytest.mark.verifies("dist-ddp-buckets")
def test_ddp_default_bucket_sizes():
    import torch.distributed as dist
    import torch.nn.parallel.distributed as ddp_module

    assert ddp_module._DEFAULT_BUCKET_CAP_MB == 25
    assert dist._DEFAULT_FIRST_BUCKET_BYTES == 1024 * 1024


@pytest.mark.verifies("dist-set-epoch")
def test_without_set_epoch_every_epoch_has_the_same_order():
    data = list(range(40))
    samplers = [DistributedSampler(data, num_replicas=4, rank=r, shuffle=True, seed=0) for r in range(4)]
    first = [list(s) for s in samplers]
    again = [list(s) for s in samplers]
    assert first == again  # same permutation, epoch after epoch
    assert first[0] != sorted(first[0])  # it is shuffled, just never reshuffled
    everything = [i for shard in first for i in shard]
    assert sorted(everything) == data  # shards are disjoint and cover the data
    for s in samplers:
        s.set_epoch(1)
    reshuffled = [list(s) for s in samplers]
    assert reshuffled != first
    assert sorted(i for shard in reshuffled for i in shard) == data


@pytest.mark.verifies("dist-sampler-padding")
def test_distributed_sampler_pads_by_repeating_indices():
    data = list(range(1003))
    shards = [list(DistributedSampler(data, num_replicas=8, rank=r, shuffle=False)) for r in range(8)]
    assert all(len(s) == 126 for s in shards)
    handed_out = [i for s in shards for i in s]
    assert len(handed_out) == 1008
    assert len(handed_out) - len(set(handed_out)) == 5
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
    assert sent[0] / size == 1.75  # 1 GB buffer on 8 GPUs: 1.75 GB sent per GPU


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
    assert 3 / 11 == pytest.approx(0.2727, rel=1e-3)
    for p, m in [(2, 1), (4, 32), (8, 8), (3, 5)]:
        assert _gpipe_idle_fraction(p, m) == pytest.approx((p - 1) / (m + p - 1))
    assert _gpipe_idle_fraction(4, 32) == pytest.approx(3 / 35)


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
    assert gb["ddp"] == pytest.approx(120)
    assert round(gb["stage1"], 1) == 31.4 and round(gb["stage3"], 1) == 1.9


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
