"""Facts of questions/gradient-accumulation.yaml, checked by running torch on tiny models.

Each verified single or multi question's test settles every choice (`# choice N` beside the
assertion, N its index in the file) and then checks that the file's key is exactly the set of
choices found true. Numeric questions compute the keyed value themselves. accum-ddp-no-sync
starts a one-rank gloo group and counts DDP's all-reduces with a communication hook; that FSDP's
no_sync keeps unsharded gradients rests on the FSDP docs. Accelerate's skipping of non-sync steps
and its stepping of the scheduler once per process (accum-scheduler-steps) rest on its source
(`accelerate/scheduler.py`, AcceleratedScheduler.step) and docs; transformers' cosine schedule is
rebuilt from its formula (transformers is not installed here).
"""

from __future__ import annotations

import contextlib
import copy
import math
import tempfile

import pytest
import torch
import torch.nn.functional as F
from bankkeys import right_choices, topic_questions
from torch import nn

TOPIC = "gradient-accumulation"



def _data(n: int, d_in: int = 6, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d_in, generator=g), torch.randn(n, 1, generator=g)


def _mlp(norm: type[nn.Module] | None = None, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    layers: list[nn.Module] = [nn.Linear(6, 8)]
    if norm is not None:
        layers.append(norm(8))
    layers += [nn.Tanh(), nn.Linear(8, 1)]
    return nn.Sequential(*layers)


def _grads(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.grad.reshape(-1) for p in model.parameters()])


def _full_batch_grads(model, x, y) -> torch.Tensor:
    model.zero_grad(set_to_none=True)
    F.mse_loss(model(x), y).backward()
    return _grads(model)


def _accumulated_grads(model, x, y, k: int, divide: bool = True) -> torch.Tensor:
    model.zero_grad(set_to_none=True)
    for xb, yb in zip(x.chunk(k), y.chunk(k)):
        loss = F.mse_loss(model(xb), yb)
        (loss / k if divide else loss).backward()
    return _grads(model)


def _rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a - b).norm() / b.norm()).item()


@pytest.mark.verifies("accum-divide-by-k")
def test_without_division_the_gradient_is_k_times_too_large():
    model = _mlp()
    x, y = _data(16)
    full = _full_batch_grads(model, x, y)
    assert _rel_err(_accumulated_grads(model, x, y, 4), full) < 1e-6
    undivided = _accumulated_grads(model, x, y, 4, divide=False)
    assert torch.allclose(undivided, 4 * full, rtol=1e-5, atol=1e-7)  # choice 0: true
    assert not torch.allclose(undivided, full, rtol=0.5)  # choice 1: false, no averaging across calls
    assert not torch.allclose(undivided, full / 4, rtol=0.5)  # choice 3: false
    model.zero_grad(set_to_none=True)
    F.mse_loss(model(x[12:]), y[12:]).backward()
    assert not torch.allclose(undivided, _grads(model), rtol=0.5)  # choice 2: false, nothing is overwritten
    assert right_choices(TOPIC, "accum-divide-by-k") == {0}


@pytest.mark.verifies("accum-zero-grad-placement")
def test_zero_grad_inside_the_group_keeps_only_the_last_micro_batch():
    model = _mlp()
    x, y = _data(16)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    full = _full_batch_grads(model, x, y)
    for xb, yb in zip(x.chunk(4), y.chunk(4)):
        opt.zero_grad()
        (F.mse_loss(model(xb), yb) / 4).backward()
    kept = _grads(model).clone()
    model.zero_grad()
    (F.mse_loss(model(x[12:]), y[12:]) / 4).backward()
    assert torch.equal(kept, _grads(model))  # choice 0: false, only the last micro-batch is left
    assert _rel_err(kept, full) > 0.1
    # choice 1: false. optimizer.step() reads .grad but never clears it
    opt.step()
    assert torch.equal(_grads(model), kept)
    # torch 2.x: zero_grad() defaults to set_to_none=True
    opt.zero_grad()
    assert all(p.grad is None for p in model.parameters())

    # choice 2: true. Zeroing once per step gives each step exactly its own group's gradient
    x2, y2 = _data(16, seed=1)
    steps = []
    for xs, ys in ((x, y), (x2, y2)):
        for xb, yb in zip(xs.chunk(4), ys.chunk(4)):
            (F.mse_loss(model(xb), yb) / 4).backward()
        steps.append(_grads(model).clone())
        opt.zero_grad()
    assert _rel_err(steps[1], _full_batch_grads(model, x2, y2)) < 1e-5
    # choice 3: false. Without zeroing between groups the second step also carries the first group's
    opt.zero_grad()
    for xs, ys in ((x, y), (x2, y2)):
        for xb, yb in zip(xs.chunk(4), ys.chunk(4)):
            (F.mse_loss(model(xb), yb) / 4).backward()
    assert torch.allclose(_grads(model), steps[0] + steps[1], rtol=1e-5, atol=1e-7)
    assert right_choices(TOPIC, "accum-zero-grad-placement") == {2}


def _one_step(model, x, y, opt_cls, k: int | None, clip: float | None = None, order=None):
    model = copy.deepcopy(model)
    opt = opt_cls(model.parameters(), lr=0.05)
    if k is None:
        F.mse_loss(model(x), y).backward()
    else:
        chunks = list(zip(x.chunk(k), y.chunk(k)))
        for i in order or range(k):
            xb, yb = chunks[i]
            (F.mse_loss(model(xb), yb) / k).backward()
    if clip is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    opt.step()
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


@pytest.mark.verifies("accum-exactness-conditions")
def test_what_breaks_exactness_and_what_does_not():
    x, y = _data(16)
    # choice 2: true. BatchNorm in train mode: micro-batch statistics change the gradient.
    bn = _mlp(nn.BatchNorm1d)
    assert _rel_err(_accumulated_grads(bn, x, y, 4), _full_batch_grads(bn, x, y)) > 1e-2
    # choice 1: false. LayerNorm is per sample: exact.
    ln = _mlp(nn.LayerNorm)
    assert _rel_err(_accumulated_grads(ln, x, y, 4), _full_batch_grads(ln, x, y)) < 1e-5
    # choices 0, 3 and 4: false, each alone and all together: AdamW, clipping the accumulated
    # gradient, a different order give the same update.
    plain = _mlp()
    assert torch.allclose(_one_step(plain, x, y, torch.optim.AdamW, None),
                          _one_step(plain, x, y, torch.optim.AdamW, 4), rtol=0, atol=1e-6)  # choice 0
    assert torch.allclose(_one_step(plain, x, y, torch.optim.SGD, None, clip=0.1),
                          _one_step(plain, x, y, torch.optim.SGD, 4, clip=0.1), rtol=0, atol=1e-6)  # choice 3
    assert torch.allclose(_one_step(plain, x, y, torch.optim.SGD, None),
                          _one_step(plain, x, y, torch.optim.SGD, 4, order=[2, 0, 3, 1]), rtol=0, atol=1e-6)  # choice 4
    big = _one_step(plain, x, y, torch.optim.AdamW, None, clip=0.1)
    acc = _one_step(plain, x, y, torch.optim.AdamW, 4, clip=0.1, order=[2, 0, 3, 1])
    assert torch.allclose(big, acc, rtol=0, atol=1e-6)
    # A per-micro-batch token mean with unequal token counts is not exact.
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(10, 5, generator=g, requires_grad=True)
    labels = torch.randint(0, 5, (10,), generator=g)
    F.cross_entropy(logits, labels).backward()
    right = logits.grad.clone()
    logits.grad = None
    for sl in (slice(0, 2), slice(2, 10)):
        (F.cross_entropy(logits[sl], labels[sl]) / 2).backward()
    assert _rel_err(logits.grad, right) > 0.3  # choice 5: true
    assert right_choices(TOPIC, "accum-exactness-conditions") == {2, 5}


@pytest.mark.verifies("accum-unequal-fix")
def test_unequal_micro_batches_need_n_i_over_n():
    model = _mlp()
    x, y = _data(104)
    full = _full_batch_grads(model, x, y)
    sizes = [32, 32, 32, 8]
    parts = list(zip(x.split(sizes), y.split(sizes)))

    def run(weight):
        model.zero_grad(set_to_none=True)
        for xb, yb in parts:
            weight(xb, yb).backward()
        return _grads(model)

    by_share = run(lambda xb, yb: F.mse_loss(model(xb), yb) * len(xb) / 104)
    by_sum = run(lambda xb, yb: F.mse_loss(model(xb), yb, reduction="sum") / 104)
    by_sum_over_k = run(lambda xb, yb: F.mse_loss(model(xb), yb, reduction="sum") / 4)
    by_k = run(lambda xb, yb: F.mse_loss(model(xb), yb) / 4)
    by_n = run(lambda xb, yb: F.mse_loss(model(xb), yb) / len(xb))
    assert _rel_err(by_share, full) < 1e-5  # choice 4: true
    assert _rel_err(by_sum, full) < 1e-5  # the sum over the group's total, as the explanation says
    assert torch.allclose(by_sum_over_k, 26 * full, rtol=1e-4, atol=1e-6)  # choice 1: false, 104 / 4 = 26 times
    assert _rel_err(by_k, full) > 1e-2  # choice 0: false
    assert _rel_err(by_n, full) > 0.5  # choice 2: false
    # choice 3: false. Dropping the last micro-batch gives the gradient of the other 96 samples, not of 104
    model.zero_grad(set_to_none=True)
    for xb, yb in parts[:3]:
        (F.mse_loss(model(xb), yb) / 4).backward()
    assert _rel_err(_grads(model), full) > 1e-2
    assert right_choices(TOPIC, "accum-unequal-fix") == {4}


@pytest.mark.verifies("accum-unequal-error")
def test_scalar_example_of_dividing_by_k():
    w = torch.tensor(0.0, requires_grad=True)
    groups = [torch.tensor([1.0, 2.0, 3.0]), torch.tensor([6.0])]
    for xs in groups:
        ((w * xs).mean() / 2).backward()
    assert w.grad.item() == topic_questions(TOPIC)["accum-unequal-error"].answer
    w.grad = None
    for xs in groups:
        ((w * xs).mean() * len(xs) / 4).backward()
    assert w.grad.item() == 3.0  # the big-batch mean gradient


@pytest.mark.verifies("accum-token-normalisation")
def test_per_micro_batch_token_mean_overweights_short_micro_batches():
    g = torch.Generator().manual_seed(0)
    vocab = 7
    # micro-batch A: one sequence of 8 positions, 2 real targets, 6 padding; B: 8 real targets
    logits_a = torch.randn(8, vocab, generator=g, requires_grad=True)
    logits_b = torch.randn(8, vocab, generator=g, requires_grad=True)
    labels_a = torch.randint(0, vocab, (8,), generator=g)
    labels_a[2:] = -100
    labels_b = torch.randint(0, vocab, (8,), generator=g)

    for logits, labels in ((logits_a, labels_a), (logits_b, labels_b)):
        (F.cross_entropy(logits, labels, ignore_index=-100) / 2).backward()
    wrong_a, wrong_b = logits_a.grad.clone(), logits_b.grad.clone()
    logits_a.grad = logits_b.grad = None

    total_tokens = int((labels_a != -100).sum() + (labels_b != -100).sum())
    assert total_tokens == 10
    for logits, labels in ((logits_a, labels_a), (logits_b, labels_b)):
        (F.cross_entropy(logits, labels, ignore_index=-100, reduction="sum") / total_tokens).backward()
    right_a, right_b = logits_a.grad, logits_b.grad

    # The gradient of one token's CE is weight * (softmax - onehot): compare the weights.
    ratio_a = wrong_a[:2].norm() / right_a[:2].norm()
    ratio_b = wrong_b.norm() / right_b.norm()
    assert ratio_a.item() == pytest.approx(topic_questions(TOPIC)["accum-token-normalisation"].answer, rel=1e-5)
    assert ratio_b.item() == pytest.approx(0.625, rel=1e-5)
    assert torch.count_nonzero(wrong_a[2:]) == 0  # padding contributes nothing

    # a micro-batch that is all padding: the mean is 0/0, a NaN loss with a zero gradient; the sum is 0
    padded = torch.randn(4, vocab, generator=g, requires_grad=True)
    nothing = torch.full((4,), -100)
    mean = F.cross_entropy(padded, nothing, ignore_index=-100)
    assert math.isnan(mean.item())
    mean.backward()
    assert torch.count_nonzero(padded.grad) == 0
    assert math.isnan((mean + F.cross_entropy(logits_b, labels_b)).item())  # a summed or logged loss turns NaN
    summed = F.cross_entropy(padded, nothing, ignore_index=-100, reduction="sum") / total_tokens
    assert summed.item() == 0.0


@pytest.mark.verifies("accum-clip-where")
def test_clip_the_accumulated_gradient_once():
    model = _mlp()
    x, y = _data(16)
    full = _full_batch_grads(model, x, y)
    assert full.norm() > 0.2  # the clip below is active
    _accumulated_grads(model, x, y, 4)
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.2)
    assert norm.item() == pytest.approx(full.norm().item(), rel=1e-5)
    clipped_once = _grads(model)
    assert torch.allclose(clipped_once, full * 0.2 / full.norm(), rtol=1e-4, atol=1e-7)

    model.zero_grad(set_to_none=True)
    for xb, yb in zip(x.chunk(4), y.chunk(4)):
        (F.mse_loss(model(xb), yb) / 4).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.2)
    per_micro = _grads(model)
    assert per_micro.norm().item() <= 0.2 + 1e-5
    assert _rel_err(per_micro, clipped_once) > 1e-2  # choice 0: false, a different direction
    # choice 1: true (above): once after the last backward equals clipping the big batch

    # choice 2: false. Clipping before each backward leaves the last gradient unclipped
    model.zero_grad(set_to_none=True)
    for xb, yb in zip(x.chunk(4), y.chunk(4)):
        if any(p.grad is not None for p in model.parameters()):
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.2)
        (F.mse_loss(model(xb), yb) / 4).backward()
    assert _rel_err(_grads(model), clipped_once) > 1e-2

    # choice 3: false. Clipping after the step is too late: the update used the unclipped gradient
    def step_with(clip_before: bool):
        m = copy.deepcopy(model)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        _accumulated_grads(m, x, y, 4)
        if clip_before:
            torch.nn.utils.clip_grad_norm_(m.parameters(), 0.2)
        opt.step()
        if not clip_before:
            torch.nn.utils.clip_grad_norm_(m.parameters(), 0.2)
        return torch.cat([p.detach().reshape(-1) for p in m.parameters()])

    assert not torch.allclose(step_with(clip_before=False), step_with(clip_before=True), atol=1e-4)
    assert right_choices(TOPIC, "accum-clip-where") == {1}


@pytest.mark.verifies("accum-order-amp", "accum-gradscaler")
def test_grad_scaler_with_accumulation():
    torch.manual_seed(0)
    model = _mlp()
    ref = copy.deepcopy(model)
    x, y = _data(16)
    k = 4
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    assert scaler.is_enabled() and scaler.get_scale() == 2.0**16

    for xb, yb in zip(x.chunk(k), y.chunk(k)):
        scaler.scale(F.mse_loss(model(xb), yb) / k).backward()
        assert scaler.get_scale() == 2.0**16  # scale() never changes the scale
        (F.mse_loss(ref(xb), yb) / k).backward()
    assert torch.allclose(_grads(model), 2.0**16 * _grads(ref), rtol=1e-6, atol=0)

    scaler.unscale_(opt)
    assert torch.allclose(_grads(model), _grads(ref), rtol=1e-6, atol=1e-9)
    with pytest.raises(RuntimeError):
        scaler.unscale_(opt)  # a second unscale_ before update() is refused
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    torch.nn.utils.clip_grad_norm_(ref.parameters(), 0.5)
    scaler.step(opt)
    scaler.update()
    ref_opt.step()
    for p, q in zip(model.parameters(), ref.parameters()):
        assert torch.allclose(p, q, rtol=0, atol=1e-7)

    # the file's keyed order is the order this test ran them in
    markers = ["autocast", "scaler.scale(", "unscale_", "clip_grad_norm_", "scaler.step", "scaler.update"]
    items = topic_questions(TOPIC)["accum-order-amp"].items
    assert [next(i for i, item in enumerate(items) if m in item) for m in markers] == list(range(len(markers)))

    # An inf in one micro-batch of the group skips the whole step and halves the scale.
    before = [p.detach().clone() for p in model.parameters()]
    opt.zero_grad()
    for i, (xb, yb) in enumerate(zip(x.chunk(k), y.chunk(k))):
        loss = F.mse_loss(model(xb), yb) / k
        if i == 1:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 2.0**15
    assert all(torch.equal(p, b) for p, b in zip(model.parameters(), before))

    # update() once per micro-batch, with no unscale_ or step since the last update, is refused
    opt.zero_grad()
    scaler.scale(F.mse_loss(model(x[:4]), y[:4]) / k).backward()
    with pytest.raises(AssertionError, match="No inf checks"):
        scaler.update()


# --- the cards ---


@pytest.mark.verifies("accum-why")
def test_backward_adds_into_grad_and_weighting_matches_the_big_batch():
    model = _mlp()
    x, y = _data(32)
    full = _full_batch_grads(model, x, y)
    # backward() adds into .grad: K undivided micro-batch losses give K times the mean gradient
    assert torch.allclose(_accumulated_grads(model, x, y, 4, divide=False), 4 * full, rtol=1e-5, atol=1e-7)
    assert _rel_err(_accumulated_grads(model, x, y, 4), full) < 1e-5  # / K for equal sizes
    # unequal sizes: weight each micro-batch by n_i / N
    model.zero_grad(set_to_none=True)
    for xb, yb in zip(x.split([10, 10, 10, 2]), y.split([10, 10, 10, 2])):
        (F.mse_loss(model(xb), yb) * len(xb) / 32).backward()
    assert _rel_err(_grads(model), full) < 1e-5
    # BatchNorm in train mode breaks the equivalence
    bn = _mlp(nn.BatchNorm1d)
    assert _rel_err(_accumulated_grads(bn, x, y, 4), _full_batch_grads(bn, x, y)) > 1e-2
    # effective batch = micro-batch x accumulation steps x data-parallel ranks
    assert 8 * 4 * 2 == 64


@pytest.mark.verifies("accum-scheduler-steps")
def test_scheduler_counts_optimizer_steps():
    samples, micro, k, epochs = 50_000, 25, 8, 3
    micro_batches = samples // micro
    assert (micro_batches, micro_batches // k, epochs * micro_batches // k) == (2000, 250, 750)
    for gpus in (1, 2, 4):  # each update sees micro x k x gpus samples: the GPU count divides the steps
        assert epochs * samples // (micro * k * gpus) == 750 // gpus
    total, warmup, floor = 750, 75, 0.1

    def factor(step):
        if step < warmup:
            return step / warmup
        p = min(1.0, (step - warmup) / (total - warmup))
        return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * p))

    def lrs_per_update(scheduler_steps_per_update):
        param = nn.Parameter(torch.zeros(1))
        opt = torch.optim.SGD([param], lr=1.0)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
        seen = []
        for _ in range(total):
            seen.append(opt.param_groups[0]["lr"])  # the lr this update runs at
            opt.step()
            for _ in range(scheduler_steps_per_update):
                sched.step()
        return seen

    right, wrong = lrs_per_update(1), lrs_per_update(k)
    assert right[warmup] == pytest.approx(1.0) and right[-1] == pytest.approx(floor, rel=1e-3)
    # stepped per micro-batch: warmup over after 75 / 8 updates, floor reached after 750 / 8 ~ 94
    assert max(range(total), key=wrong.__getitem__) == math.ceil(warmup / k)
    assert wrong[math.ceil(total / k)] == pytest.approx(floor) and wrong[math.ceil(total / k) - 2] > floor
    assert all(lr == pytest.approx(floor) for lr in wrong[94:])  # this schedule clamps its progress at 1
    assert right[94] > 0.9
    # torch's CosineAnnealingLR does not clamp: stepped per micro-batch it reaches its minimum after
    # about 94 updates and then climbs back up
    def hf_cosine(step):  # transformers' get_cosine_schedule_with_warmup, from its formula
        if step < warmup:
            return step / max(1, warmup)
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * (step - warmup) / max(1, total - warmup))))

    for make in (lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=total),
                 lambda o: torch.optim.lr_scheduler.LambdaLR(o, hf_cosine)):
        param = nn.Parameter(torch.zeros(1))
        opt = torch.optim.SGD([param], lr=1.0)
        cosine = make(opt)
        seen = []
        for _ in range(2 * math.ceil(total / k)):
            seen.append(opt.param_groups[0]["lr"])
            opt.step()
            for _ in range(k):
                cosine.step()
        low = min(range(warmup, len(seen)), key=seen.__getitem__)  # past the warmup's start at 0
        assert abs(low - total / k) <= 1 and seen[low] < 1e-3
        assert seen[-1] > 0.7  # well on the way back up after another 94 updates
    # an epoch that does not divide evenly: the short last group is a step too
    assert math.ceil(2001 / k) == 251


@pytest.mark.verifies("accum-batchnorm")
def test_batchnorm_under_accumulation():
    torch.manual_seed(0)
    x = torch.randn(32, 3) * 2 + 1
    # forward outputs differ: each micro-batch is normalised with its own statistics
    full_bn, micro_bn = nn.BatchNorm1d(3), nn.BatchNorm1d(3)
    full_out = full_bn(x)
    micro_out = torch.cat([micro_bn(c) for c in x.chunk(8)])
    assert not torch.allclose(full_out, micro_out, atol=1e-2)
    # running statistics: 8 updates, each from 4 samples, momentum applied 8 times
    assert full_bn.num_batches_tracked.item() == 1 and micro_bn.num_batches_tracked.item() == 8
    assert not torch.allclose(full_bn.running_mean, micro_bn.running_mean)
    # gradients differ (BN's backward couples the samples of a micro-batch only)
    bn_model = _mlp(nn.BatchNorm1d)
    xs, ys = _data(32)
    assert _rel_err(_accumulated_grads(bn_model, xs, ys, 8), _full_batch_grads(bn_model, xs, ys)) > 1e-2
    # micro-batch of one: BatchNorm1d refuses, BatchNorm2d uses one image's spatial statistics
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm1d(3)(torch.randn(1, 3))
    image = torch.randn(1, 3, 4, 4)
    out = nn.BatchNorm2d(3)(image)
    assert torch.allclose(out.mean(dim=(0, 2, 3)), torch.zeros(3), atol=1e-6)
    # GroupNorm/LayerNorm do not use the batch: accumulation is exact again
    ln_model = _mlp(nn.LayerNorm)
    assert _rel_err(_accumulated_grads(ln_model, xs, ys, 8), _full_batch_grads(ln_model, xs, ys)) < 1e-5
    # eval mode (frozen statistics) is exact too
    frozen = _mlp(nn.BatchNorm1d)
    frozen[1].eval()
    assert _rel_err(_accumulated_grads(frozen, xs, ys, 8), _full_batch_grads(frozen, xs, ys)) < 1e-5


@pytest.mark.verifies("accum-ddp-no-sync")
def test_ddp_all_reduces_every_backward_unless_no_sync():
    import torch.distributed as dist

    if not dist.is_gloo_available() or dist.is_initialized():
        pytest.skip("needs gloo and no process group of its own")
    x, y = _data(32)
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method=f"file://{tmp}/store", rank=0, world_size=1)
        try:
            model = _mlp()
            ddp = nn.parallel.DistributedDataParallel(model)
            calls = []

            def count(state, bucket):
                calls.append(bucket.index())
                fut = torch.futures.Future()
                fut.set_result(bucket.buffer())
                return fut

            ddp.register_comm_hook(None, count)

            def group(mode):
                calls.clear()
                ddp.zero_grad(set_to_none=True)
                for i, (xb, yb) in enumerate(zip(x.chunk(8), y.chunk(8))):
                    last = i == 7
                    ctx = contextlib.nullcontext() if last else ddp.no_sync()
                    if mode == "default":
                        (F.mse_loss(ddp(xb), yb) / 8).backward()
                    elif mode == "no_sync":
                        with ctx:
                            (F.mse_loss(ddp(xb), yb) / 8).backward()
                    else:  # forward outside the context, backward inside
                        out = ddp(xb)
                        with ctx:
                            (F.mse_loss(out, yb) / 8).backward()
                return len(calls), _grads(model).clone()

            default_calls, default_grads = group("default")
            no_sync_calls, no_sync_grads = group("no_sync")
            outside_calls, _ = group("forward_outside")
        finally:
            dist.destroy_process_group()
    assert default_calls == 8  # one all-reduce per micro-batch (one bucket here)
    assert no_sync_calls == 1  # only the last backward syncs
    assert outside_calls == 8  # a forward outside no_sync() still syncs
    assert torch.allclose(no_sync_grads, default_grads, rtol=1e-6, atol=1e-8)
    assert _rel_err(no_sync_grads, _full_batch_grads(_mlp(), x, y)) < 1e-5
    # FSDP's switches for the same thing
    from torch.distributed.fsdp import FSDPModule, FullyShardedDataParallel

    assert callable(FullyShardedDataParallel.no_sync) and callable(FSDPModule.set_requires_gradient_sync)
