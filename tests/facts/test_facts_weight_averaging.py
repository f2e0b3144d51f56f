"""Facts taught by questions/weight-averaging.yaml, checked with torch on the CPU.

Each verified single or multi question's test settles every choice (`# choice N` beside the
assertion, N its index in the file) and then checks that the file's key is exactly the set found
true. Numeric questions compute their value by running an EMA (torch's own
`get_ema_multi_avg_fn` update) and check that the file's tolerance takes the rounded value and
rejects the usual slips.

What rests on sources rather than on torch: wavg-ema-what's list of where EMAs are used (image
classification recipes, diffusion models, BYOL and DINO teachers) rests on those papers and
recipes; wavg-ema-warmup-schedule takes the formula `min(decay, (1 + step) / (10 + step))` from
the documentation of TensorFlow's `tf.train.ExponentialMovingAverage` and checks what it does; in
wavg-averagedmodel-buffers, torch's docs advise comparing update_bn and use_buffers=True
empirically (choice 4 is settled by measuring that the averaged statistics differ from those of
the averaged weights). Not verified (they rest on papers): wavg-swa-paper (Izmailov et al.,
2018), wavg-greedy-soup (Wortsman et al., 2022, and the numbers of its model-soups repository),
wavg-checkpoint-averaging (Vaswani et al., 2017), and the order of wavg-swa-procedure, whose
update_bn-after-the-last-update step is settled in test_update_bn_resets_and_averages_per_batch.
"""

from __future__ import annotations

import copy
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from bankkeys import accepts, right_choices
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.utils.flop_counter import FlopCounterMode

TOPIC = "weight-averaging"


def _right(qid: str) -> set[int]:
    return right_choices(TOPIC, qid)


def _ema_weights(decay: float, steps: int) -> torch.Tensor:
    """Weight of each snapshot w_0..w_steps in an EMA started from w_0, found by running torch's
    EMA update on one-hot snapshots (the EMA is linear, so coordinate s is the weight of w_s)."""
    update = get_ema_multi_avg_fn(decay)
    e = torch.zeros(steps + 1, dtype=torch.float64)
    e[0] = 1.0  # the first snapshot is copied in
    for s in range(1, steps + 1):
        w = torch.zeros(steps + 1, dtype=torch.float64)
        w[s] = 1.0
        update([e], [w], None)
    return e


def _bn_net() -> nn.Module:
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.BatchNorm1d(8), nn.Linear(8, 3))


def _sgd_snapshots(model: nn.Module, n: int, lr: float = 0.3, seed: int = 0) -> list[dict]:
    """n state_dicts of a model after successive noisy SGD steps, BatchNorm in train mode."""
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    snaps = []
    for _ in range(n):
        x = torch.randn(16, 4, generator=g)
        y = torch.randint(0, 3, (16,), generator=g)
        model.train()
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        snaps.append(copy.deepcopy(model.state_dict()))
    return snaps


@pytest.mark.verifies("wavg-ema-what")
def test_ema_update_rule_horizon_and_cost():
    torch.manual_seed(0)
    model = nn.Linear(6, 3)
    ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
    manual = None
    for _ in range(5):
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn_like(p))
        live_before = [p.detach().clone() for p in model.parameters()]
        ema.update_parameters(model)
        current = [p.detach().clone() for p in model.parameters()]
        # the live weights are never changed by the EMA update
        assert all(torch.equal(a, b) for a, b in zip(live_before, current))
        manual = current if manual is None else [0.999 * e + 0.001 * w for e, w in zip(manual, current)]
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(ema.module.parameters(), manual))
    # one more copy of the parameters
    assert sum(p.numel() for p in ema.module.parameters()) == sum(p.numel() for p in model.parameters())
    # horizon: the last 1 / (1 - d) = 1000 updates carry about 63 %
    w = _ema_weights(0.999, 3000)
    assert w.sum().item() == pytest.approx(1.0, abs=1e-9)
    assert w[-1000:].sum().item() == pytest.approx(1 - 0.999**1000, rel=1e-9)
    assert w[-1000:].sum().item() == pytest.approx(0.632, abs=0.001)


@pytest.mark.verifies("wavg-ema-horizon")
def test_ema_horizon():
    w = _ema_weights(0.999, 8000)
    newest_first = w.flip(0)  # newest_first[k]: weight of the snapshot k updates old
    assert newest_first[:1000].sum().item() == pytest.approx(0.632, abs=0.001)  # choice 2: true
    # choice 0: false, the weights fall geometrically with age: 1000 steps older, e times lighter
    assert (newest_first[0] / newest_first[1000]).item() == pytest.approx(math.e, rel=0.001)
    # choice 1: false, 693 steps is the half-life; half the weight is older, and none is dropped
    assert newest_first[693:].sum().item() == pytest.approx(0.5, abs=0.001)
    assert bool((newest_first[693:2000] > 0).all())
    # choice 3: false, beyond 5000 steps there is only 0.7 % left
    assert newest_first[5000:].sum().item() == pytest.approx(0.0067, abs=0.0001)
    assert _right("wavg-ema-horizon") == {2}


@pytest.mark.verifies("wavg-ema-lag")
def test_ema_lag_behind_a_steady_drift():
    update = get_ema_multi_avg_fn(0.999)
    e = torch.zeros(1, dtype=torch.float64)
    for t in range(1, 20001):
        update([e], [torch.tensor([float(t)], dtype=torch.float64)], None)
    lag = 20000 - e.item()
    assert lag == pytest.approx(0.999 / 0.001, rel=1e-6)
    for typed in (f"{lag:.0f}", "999", "1000"):
        assert accepts(TOPIC, "wavg-ema-lag", typed)
    for slip in ("693", "500", "2000", "1999"):  # half-life, half the lag, the matching window
        assert not accepts(TOPIC, "wavg-ema-lag", slip)
    # a uniform window of K snapshots lags (K - 1) / 2: K = 1999 matches
    assert torch.arange(1999, dtype=torch.float64).mean().item() == pytest.approx(lag, rel=1e-6)


@pytest.mark.verifies("wavg-ema-init-share")
def test_ema_share_of_the_initial_weights():
    update = get_ema_multi_avg_fn(0.9999)
    e = torch.ones(1, dtype=torch.float64)  # the initial weights: 1; every later snapshot: 0
    zero = torch.zeros(1, dtype=torch.float64)
    for _ in range(10000):
        update([e], [zero], None)
    share = e.item()
    assert share == pytest.approx(0.9999**10000, rel=1e-9)
    assert accepts(TOPIC, "wavg-ema-init-share", f"{share:.3f}")
    for slip in ("0.632", "0.999", "0", "0.5"):
        assert not accepts(TOPIC, "wavg-ema-init-share", slip)
    # Adam-style debiasing of a zero-started EMA: a constant snapshot value c reads back as c
    e = torch.zeros(1, dtype=torch.float64)
    c = torch.full((1,), 3.0, dtype=torch.float64)
    for _ in range(10):
        update([e], [c], None)
    assert (e / (1 - 0.9999**10)).item() == pytest.approx(3.0, rel=1e-9)


@pytest.mark.verifies("wavg-ema-warmup-schedule")
def test_tensorflow_style_decay_warmup():
    def decay(t: int) -> float:
        return min(0.999, (1 + t) / (10 + t))

    values = [decay(t) for t in range(20000)]
    assert values[0] == pytest.approx(0.1)  # choice 0: true
    assert [round(values[t], 3) for t in (10, 90, 990)] == [0.55, 0.91, 0.991]
    first_capped = next(t for t, d in enumerate(values) if d >= 0.999 - 1e-12)
    assert first_capped == 8990  # choice 0: true; choice 3: false, the cap, not a start
    assert all(a <= b for a, b in zip(values, values[1:]))  # choice 2: false, it only grows

    def run(snapshots, decays):
        e = snapshots[0].clone()
        for w, d in zip(snapshots[1:], decays):
            e.lerp_(w, 1 - d)
        return e

    n = 100
    impulse = [torch.zeros(1, dtype=torch.float64) for _ in range(n + 1)]
    impulse[0][0] = 1.0
    start_share = run(impulse, values[:n]).item()
    assert start_share == pytest.approx(2.3e-13, rel=0.05)  # no bias towards the init
    assert 0.999**n == pytest.approx(0.905, abs=0.001)
    # choice 3: false, an early snapshot (step 5) still carries weight after update 100
    probe = [torch.zeros(1, dtype=torch.float64) for _ in range(n + 1)]
    probe[5][0] = 1.0
    assert run(probe, values[:n]).item() > 0
    # choice 1: false, no division: Adam-style debiasing of a constant-decay EMA gives another value
    ramp = [torch.tensor([float(t)], dtype=torch.float64) for t in range(n + 1)]
    scheduled = run(ramp, values[:n]).item()
    e = torch.zeros(1, dtype=torch.float64)
    for w in ramp[1:]:
        e.lerp_(w, 1 - 0.999)
    debiased = (e / (1 - 0.999**n)).item()
    assert abs(scheduled - debiased) > 1.0
    assert _right("wavg-ema-warmup-schedule") == {0}


@pytest.mark.verifies("wavg-averagedmodel-mean")
def test_averaged_model_is_a_plain_mean_of_the_updates():
    torch.manual_seed(0)
    model = nn.Linear(5, 2)
    construction = [p.detach().clone() for p in model.parameters()]
    swa = AveragedModel(model)
    snaps = []
    for epoch in range(10):
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn_like(p))
        if epoch >= 5:
            swa.update_parameters(model)
            snaps.append([p.detach().clone() for p in model.parameters()])
    got = list(swa.parameters())
    mean5 = [torch.stack(s).mean(0) for s in zip(*snaps)]
    mean6 = [torch.stack(s).mean(0) for s in zip(construction, *snaps)]
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, mean5))  # choice 3: true
    assert not all(torch.allclose(a, b, atol=1e-3) for a, b in zip(got, mean6))  # choice 0: false
    ema = snaps[0]
    for s in snaps[1:]:
        ema = [0.999 * e + 0.001 * w for e, w in zip(ema, s)]
    assert not all(torch.allclose(a, b, atol=1e-3) for a, b in zip(got, ema))  # choice 1: false
    last = [p.detach() for p in model.parameters()]
    assert not all(torch.allclose(a, b, atol=1e-3) for a, b in zip(got, last))  # choice 2: false
    assert swa.n_averaged.item() == 5 and "n_averaged" in swa.state_dict()
    assert _right("wavg-averagedmodel-mean") == {3}


@pytest.mark.verifies("wavg-averagedmodel-buffers")
def test_averaged_model_buffers_state_and_first_update():
    torch.manual_seed(0)
    model = _bn_net()
    ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
    constructed = [p.detach().clone() for p in ema.module.parameters()]
    ema_buffers = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999), use_buffers=True)
    running_means = []
    g = torch.Generator().manual_seed(1)
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    for step in range(6):
        model.train()
        opt.zero_grad()
        F.cross_entropy(model(torch.randn(16, 4, generator=g) * (step + 1)),
                        torch.randint(0, 3, (16,), generator=g)).backward()
        opt.step()
        ema.update_parameters(model)
        ema_buffers.update_parameters(model)
        running_means.append(model[2].running_mean.clone())
        # choice 0: true, the buffers are exact copies of the live ones
        assert torch.equal(ema.module[2].running_mean, model[2].running_mean)
        assert torch.equal(ema.module[2].running_var, model[2].running_var)
        if step == 0:
            # choice 1: false, the first call copies; no blend with the construction copy
            assert all(torch.equal(a, b.detach()) for a, b in zip(ema.module.parameters(), model.parameters()))
            assert not all(torch.equal(a, b) for a, b in zip(ema.module.parameters(), constructed))
    # choice 3: true, with use_buffers=True the running mean is averaged by the same EMA
    expected = running_means[0]
    for rm in running_means[1:]:
        expected = 0.999 * expected + 0.001 * rm
    assert torch.allclose(ema_buffers.module[2].running_mean, expected, atol=1e-6)
    assert not torch.allclose(ema_buffers.module[2].running_mean, model[2].running_mean, atol=1e-3)

    # choice 2: false, no function in the state_dict; a fresh AveragedModel is a plain mean
    state = ema.state_dict()
    assert set(state) == {"n_averaged"} | {f"module.{k}" for k in model.state_dict()}
    assert all(isinstance(v, torch.Tensor) for v in state.values())
    reloaded = AveragedModel(model)
    reloaded.load_state_dict(state)
    before = [p.detach().clone() for p in reloaded.parameters()]
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    reloaded.update_parameters(model)
    n = state["n_averaged"].item()
    as_mean = [b + (w.detach() - b) / (n + 1) for b, w in zip(before, model.parameters())]
    as_ema = [0.999 * b + 0.001 * w.detach() for b, w in zip(before, model.parameters())]
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(reloaded.parameters(), as_mean))
    assert not all(torch.allclose(a, b, atol=1e-4) for a, b in zip(reloaded.parameters(), as_ema))

    # choice 4: false, averaged statistics are not those of the averaged weights
    x = torch.randn(256, 4, generator=g) * 3
    avg = AveragedModel(model, use_buffers=True)
    for snap in _sgd_snapshots(model, 8, lr=0.5):
        model.load_state_dict(snap)
        avg.update_parameters(model)
    true = AveragedModel(model)  # a copy to hold the averaged weights' own statistics
    true.module.load_state_dict(avg.module.state_dict())
    update_bn([x], true)
    assert not torch.allclose(avg.module[2].running_mean, true.module[2].running_mean, atol=0.05)
    assert _right("wavg-averagedmodel-buffers") == {0, 3}


@pytest.mark.verifies("wavg-update-bn-behaviour")
def test_update_bn_resets_and_averages_per_batch():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5), nn.BatchNorm1d(3, momentum=0.1))
    with torch.no_grad():
        net[0].weight.copy_(torch.eye(3))
        net[0].bias.zero_()
    params = [p.detach().clone() for p in net.parameters()]
    net[2].running_mean.fill_(100.0)
    net.eval()
    batches = [torch.randn(10, 3) + 5, torch.randn(2, 3) * 3 - 4]  # a short last batch
    torch.manual_seed(1)
    update_bn(batches, net)
    torch.manual_seed(1)  # same dropout masks, replayed in train mode by hand
    bn_in = [net[1].train()(b) for b in batches]
    net.eval()
    per_batch = torch.stack([b.mean(0) for b in bn_in]).mean(0)
    # choice 0: true, reset, equal weight per batch, momentum restored
    assert torch.allclose(net[2].running_mean, per_batch, atol=1e-5)
    assert net[2].momentum == 0.1 and net[2].num_batches_tracked.item() == 2
    # choice 2: false, not the mean over all samples when batch sizes differ
    assert not torch.allclose(net[2].running_mean, torch.cat(bn_in).mean(0), atol=0.5)
    # choice 3: false, the previous (eval) mode is restored
    assert not net.training and not net[2].training
    # choice 5: false, parameters untouched
    assert all(torch.equal(a, b) for a, b in zip(params, net.parameters()))
    # choice 1: false, Dropout is active during the pass: a constant input gets variance
    constant = nn.Sequential(nn.Dropout(0.5), nn.BatchNorm1d(3))
    update_bn([torch.ones(1000, 3)], constant)
    assert (constant[1].running_var > 0.5).all()  # without dropout it would be 0

    # choice 4: true, update_parameters after update_bn copies the live buffers back
    model = _bn_net()
    _sgd_snapshots(model, 3)
    swa = AveragedModel(model)
    swa.update_parameters(model)
    update_bn([torch.randn(64, 4) * 4], swa)
    recomputed = swa.module[2].running_mean.clone()
    assert not torch.allclose(recomputed, model[2].running_mean, atol=1e-3)
    swa.update_parameters(model)
    assert torch.equal(swa.module[2].running_mean, model[2].running_mean)
    assert _right("wavg-update-bn-behaviour") == {0, 4}


@pytest.mark.verifies("wavg-why-update-bn")
def test_averaged_weights_need_their_own_statistics():
    torch.manual_seed(0)
    model = _bn_net()
    g = torch.Generator().manual_seed(3)
    data = torch.randn(512, 4, generator=g) * 2
    swa = AveragedModel(model)
    for snap in _sgd_snapshots(model, 10, lr=0.5):
        model.load_state_dict(snap)
        swa.update_parameters(model)
    # the stored buffers are the live model's (AveragedModel's default copies them)
    assert torch.equal(swa.module[2].running_mean, model[2].running_mean)
    with torch.no_grad():
        pre_bn = swa.module[:2](data)  # what the averaged weights feed into BatchNorm
    stale_gap = (swa.module[2].running_mean - pre_bn.mean(0)).abs().max().item()
    update_bn([data], swa)  # one full batch: the exact statistics of the averaged weights
    assert torch.allclose(swa.module[2].running_mean, pre_bn.mean(0), atol=1e-5)
    assert torch.allclose(swa.module[2].running_var, pre_bn.var(0), atol=1e-4)
    assert stale_gap > 0.05
    # the mean activation after a ReLU is not the average of the snapshots' means
    mean_of_means = torch.zeros(8)
    snaps = _sgd_snapshots(copy.deepcopy(model), 4, lr=0.5, seed=7)
    for snap in snaps:
        m = _bn_net()
        m.load_state_dict(snap)
        with torch.no_grad():
            mean_of_means += m[:2](data).mean(0) / len(snaps)
    averaged = _bn_net()
    averaged.load_state_dict({k: sum(s[k].float() for s in snaps) / len(snaps) for k in snaps[0]})
    with torch.no_grad():
        assert not torch.allclose(averaged[:2](data).mean(0), mean_of_means, atol=1e-3)
    # LayerNorm keeps no running statistics: nothing to recompute
    assert list(nn.LayerNorm(8).buffers()) == []


@pytest.mark.verifies("wavg-swalr")
def test_swalr_anneals_once_then_holds():
    p = nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=0.5)
    sched = SWALR(opt, swa_lr=0.05, anneal_epochs=4, anneal_strategy="cos")
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(8):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    expected = [0.05 + 0.45 * (1 + math.cos(math.pi * min(s, 4) / 4)) / 2 for s in range(9)]
    assert lrs == pytest.approx(expected, abs=1e-12)
    assert [round(v, 3) for v in lrs[:5]] == [0.5, 0.434, 0.275, 0.116, 0.05]  # choice 1: true
    assert lrs[0] != pytest.approx(0.025) and 0.025 not in [round(v, 3) for v in lrs]  # choice 0: false
    assert lrs[0] != pytest.approx(0.05)  # choice 2: false, not constant from the start
    assert all(v == pytest.approx(0.05) for v in lrs[4:])  # choice 3: false, it never rises again
    assert _right("wavg-swalr") == {1}


def _mlp(seed: int) -> nn.Sequential:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


def _average(*models: nn.Module) -> nn.Module:
    out = copy.deepcopy(models[0])
    out.load_state_dict({k: sum(m.state_dict()[k] for m in models) / len(models) for k in out.state_dict()})
    return out


def _permuted(model: nn.Sequential, perm: torch.Tensor) -> nn.Sequential:
    out = copy.deepcopy(model)
    with torch.no_grad():
        out[0].weight.copy_(model[0].weight[perm])
        out[0].bias.copy_(model[0].bias[perm])
        out[2].weight.copy_(model[2].weight[:, perm])
    return out


@pytest.mark.verifies("wavg-same-basin")
def test_permutations_break_averaging_and_shared_inits_do_not():
    x = torch.randn(200, 6, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    a = _mlp(0).double()
    perm = torch.randperm(16, generator=torch.Generator().manual_seed(1))
    b = _permuted(a, perm)
    with torch.no_grad():
        assert torch.allclose(a(x), b(x), atol=1e-6)  # choice 0: true
        # choices 1 and 3: false, same function (same loss), yet the average is another network
        gap_ab = (_average(a, b)(x) - a(x)).abs().max().item()
        assert gap_ab > 0.1
        # choice 4: true, undoing the permutation and averaging returns A exactly
        restored = _permuted(b, torch.argsort(perm))
        assert torch.allclose(_average(a, restored)(x), a(x), atol=1e-6)

        # choice 2: true, nearby fine-tunes: weight average ~ output ensemble, gap second order
        base = _mlp(2).double()

        def fine_tunes(scale: float):
            g = torch.Generator().manual_seed(3)
            out = []
            for _ in range(2):
                m = copy.deepcopy(base)
                for p in m.parameters():
                    p.add_(scale * torch.randn(p.shape, generator=g, dtype=p.dtype))
                out.append(m)
            return out

        gaps = []
        for scale in (0.02, 0.01):
            c, d = fine_tunes(scale)
            gaps.append((_average(c, d)(x) - (c(x) + d(x)) / 2).abs().max().item())
            spread = (c(x) - d(x)).abs().max().item()
            assert gaps[-1] < 0.1 * spread
        assert gaps[0] / gaps[1] == pytest.approx(4.0, rel=0.2)

    # choice 5: false, the average is one network of the same size
    def flops(model):
        with FlopCounterMode(display=False) as counter:
            model(x)
        return counter.get_total_flops()

    assert flops(_average(c, d)) == flops(c)
    assert _right("wavg-same-basin") == {0, 2, 4}


@pytest.mark.verifies("wavg-linear-average")
def test_weight_averages_equal_output_averages_only_when_linear_in_parameters():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(50, 5, generator=g, dtype=torch.float64)
    torch.manual_seed(0)
    phi = nn.Sequential(nn.Linear(5, 7), nn.Tanh()).double()  # frozen, shared by all models
    probes = [nn.Linear(7, 3).double() for _ in range(4)]
    with torch.no_grad():
        outs = [p(phi(x)) for p in probes]
        avg_probe = _average(*probes)
        assert torch.allclose(avg_probe(phi(x)), torch.stack(outs).mean(0), atol=1e-12)  # choice 0: true
        # choice 1: false, logits average but probabilities do not
        probs = torch.stack([o.softmax(-1) for o in outs]).mean(0)
        assert not torch.allclose(avg_probe(phi(x)).softmax(-1), probs, atol=1e-3)
        # choice 2: false, ReLU MLPs
        x6 = torch.randn(50, 6, generator=g, dtype=torch.float64)
        mlps = [_mlp(s).double() for s in range(3)]
        mean_out = torch.stack([m(x6) for m in mlps]).mean(0)
        assert not torch.allclose(_average(*mlps)(x6), mean_out, atol=1e-3)
        # choice 3: false, deep linear network: products of weights
        deep = [nn.Sequential(nn.Linear(5, 4, bias=False), nn.Linear(4, 3, bias=False)).double() for _ in range(3)]
        mean_deep = torch.stack([m(x) for m in deep]).mean(0)
        assert not torch.allclose(_average(*deep)(x), mean_deep, atol=1e-3)
    assert _right("wavg-linear-average") == {0}
