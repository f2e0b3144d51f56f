"""Facts taught by questions/lr-schedules.yaml, checked by running torch's schedulers.

Each single or multi question's test settles every choice (`# choice N` beside the assertion, N
its index in the file) and then checks that the file's key is exactly the set found true.
Rests on a source other than torch: the transformers schedules of sched-past-total,
sched-min-lr-floor and sched-extend-run, re-created here from the formulas in transformers'
`optimization.py` (transformers 4.x). The cards' findings from papers (Ma and
Yarats 2021 on warmup length, Bergsma et al. 2025 on decaying to zero, Chinchilla's cycle length)
are not re-run; their tests check the schedule arithmetic the cards quote.
"""

import math
import warnings

import pytest
import torch
from bankkeys import right_choices, topic_questions
from torch.optim.lr_scheduler import (
    CosineAnnealingLR,
    LambdaLR,
    LinearLR,
    OneCycleLR,
    PolynomialLR,
    SequentialLR,
    StepLR,
)

TOPIC = "lr-schedules"



def _sgd(lr=1.0, **kwargs):
    param = torch.nn.Parameter(torch.zeros(1))
    return param, torch.optim.SGD([param], lr=lr, **kwargs)


def _lr(optimizer, group=0):
    return optimizer.param_groups[group]["lr"]


def _advance(optimizer, scheduler, steps):
    for _ in range(steps):
        optimizer.step()
        scheduler.step()


def _warmup(warmup_steps):
    return lambda step: min(1.0, step / warmup_steps)


def _hf_cosine(warmup, total, cycles=0.5):
    """transformers' get_cosine_schedule_with_warmup lambda, rebuilt from its formula."""

    def factor(step):
        if step < warmup:
            return step / max(1, warmup)
        progress = (step - warmup) / max(1, total - warmup)
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * cycles * 2.0 * progress)))

    return factor


def _hf_linear(warmup, total):
    """transformers' get_linear_schedule_with_warmup lambda."""

    def factor(step):
        if step < warmup:
            return step / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


@pytest.mark.verifies("sched-lambdalr-name")
def test_lambdalr_sets_initial_lr_times_factor_in_every_group():
    a, b = torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([{"params": [a], "lr": 0.1}, {"params": [b], "lr": 0.01}])
    scheduler = LambdaLR(optimizer, lambda step: 0.5**step)
    _advance(optimizer, scheduler, 3)
    assert _lr(optimizer, 0) == pytest.approx(0.1 * 0.5**3)
    assert _lr(optimizer, 1) == pytest.approx(0.01 * 0.5**3)


@pytest.mark.verifies("sched-lambdalr-first-step")
def test_first_optimizer_step_runs_at_lambda_of_zero():
    _, optimizer = _sgd(lr=1e-3)
    scheduler = LambdaLR(optimizer, lambda s: min(1.0, s / 100))
    # before any batch is drawn, the constructor has already applied lambda(0)
    assert _lr(optimizer) == 0.0  # choice 2: true; choice 3: false, no loader involved
    assert _lr(optimizer) != pytest.approx(1e-5)  # choice 0: false
    assert _lr(optimizer) != pytest.approx(1e-3)  # choice 1: false
    _advance(optimizer, scheduler, 1)
    assert _lr(optimizer) == pytest.approx(1e-3 / 100)
    _advance(optimizer, scheduler, 99)
    assert _lr(optimizer) == pytest.approx(1e-3)  # the full lr after 100 steps
    # a (step + 1) / W lambda starts at base_lr / W instead of wasting a step at lr 0
    _, optimizer = _sgd(lr=1e-3)
    scheduler = LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 100))
    assert _lr(optimizer) == pytest.approx(1e-5)
    _advance(optimizer, scheduler, 99)
    assert _lr(optimizer) == pytest.approx(1e-3)  # ...and reaches the full lr one step earlier
    assert right_choices(TOPIC, "sched-lambdalr-first-step") == {2}


@pytest.mark.verifies("sched-step-order")
def test_scheduler_before_optimizer_warns_and_skips_the_first_value():
    _, optimizer = _sgd(lr=0.1)
    scheduler = LambdaLR(optimizer, _warmup(10))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scheduler.step()  # wrong order: before any optimizer.step()
    assert any("optimizer.step()" in str(w.message) for w in caught)
    # the first real update now runs at lambda(1), not lambda(0)
    assert _lr(optimizer) == pytest.approx(0.1 * 1 / 10)

    _, optimizer = _sgd(lr=0.1)
    scheduler = LambdaLR(optimizer, _warmup(10))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optimizer.step()
        scheduler.step()
    assert not any("lr_scheduler.step()" in str(w.message) for w in caught)

    # a first step skipped by GradScaler (inf gradient) triggers the same, harmless, warning
    param, optimizer = _sgd(lr=0.1)
    scheduler = LambdaLR(optimizer, lambda step: 1.0)
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale((param * float("inf")).sum()).backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
    assert any("optimizer.step()" in str(w.message) for w in caught)


@pytest.mark.verifies("sched-step-vs-epoch")
def test_epoch_designed_steplr_stepped_per_batch_decays_after_30_batches():
    _, optimizer = _sgd(lr=0.1)
    scheduler = StepLR(optimizer, step_size=30, gamma=0.1)
    _advance(optimizer, scheduler, 29)
    assert _lr(optimizer) == pytest.approx(0.1)
    _advance(optimizer, scheduler, 1)  # choice 2: false, the 30th and 31st calls raise nothing
    assert _lr(optimizer) == pytest.approx(0.01)  # choice 3: true; choices 0 and 1: false
    _advance(optimizer, scheduler, 500 - 30)  # end of the first 500-batch epoch
    assert _lr(optimizer) == pytest.approx(0.1 * 0.1 ** 16)  # choice 3: sixteen decays
    assert 500 // 30 == 16
    assert right_choices(TOPIC, "sched-step-vs-epoch") == {3}


@pytest.mark.verifies("sched-onecycle")
def test_onecycle_defaults():
    _, optimizer = _sgd(lr=0.1, momentum=0.9)
    scheduler = OneCycleLR(optimizer, max_lr=1.0, total_steps=100)
    assert _lr(optimizer) == pytest.approx(1.0 / 25)  # choice 0: true
    assert _lr(optimizer) != pytest.approx(0.1)  # choice 4: false, the optimizer's lr is ignored
    assert optimizer.param_groups[0]["momentum"] == pytest.approx(0.95)  # choice 3: false, not 0.9
    lrs, momenta = [], []
    for step in range(100):
        lrs.append(_lr(optimizer))
        momenta.append(optimizer.param_groups[0]["momentum"])
        optimizer.step()
        if step < 99:
            scheduler.step()
    peak = max(range(100), key=lrs.__getitem__)
    assert peak == 29  # choice 1: true, pct_start=0.3
    assert lrs[peak] == pytest.approx(1.0)
    assert momenta[peak] == pytest.approx(0.85)  # choice 3: false, momentum cycles
    assert lrs[-1] == pytest.approx(1.0 / 25 / 1e4)  # choice 2: true, 4e-6
    scheduler.step()  # the 100th step lands exactly on total_steps: still allowed...
    assert _lr(optimizer) == pytest.approx(5.07e-4, rel=1e-2)  # choice 5: false, the lr rises
    with pytest.raises(ValueError, match="Tried to step 101 times"):
        scheduler.step()  # choice 5: false, then it raises instead of holding
    assert right_choices(TOPIC, "sched-onecycle") == {0, 1, 2}


@pytest.mark.verifies("sched-warmup-cosine-value")
def test_warmup_cosine_value_with_floor():
    peak, warmup, total, floor_ratio = 3e-4, 100, 1000, 0.1
    _, optimizer = _sgd(lr=peak)
    scheduler = SequentialLR(
        optimizer,
        [
            LinearLR(optimizer, start_factor=1e-6, end_factor=1.0, total_iters=warmup),
            CosineAnnealingLR(optimizer, T_max=total - warmup, eta_min=peak * floor_ratio),
        ],
        milestones=[warmup],
    )
    _advance(optimizer, scheduler, 400)
    assert _lr(optimizer) == pytest.approx(topic_questions(TOPIC)["sched-warmup-cosine-value"].answer, rel=1e-6)
    _advance(optimizer, scheduler, 600)
    assert _lr(optimizer) == pytest.approx(3e-5, rel=1e-6)

    # the schedule as the prompt states it, written as one LambdaLR: 0 at step 0, 3e-4 at step 100,
    # a cosine between 3e-4 and 3e-5 over steps 100 to 1000
    def factor(s):
        if s < warmup:
            return s / warmup
        p = (s - warmup) / (total - warmup)
        return floor_ratio + (1 - floor_ratio) * 0.5 * (1 + math.cos(math.pi * p))

    _, optimizer = _sgd(lr=peak)
    scheduler = LambdaLR(optimizer, factor)
    lrs = [_lr(optimizer)]
    for _ in range(total):
        _advance(optimizer, scheduler, 1)
        lrs.append(_lr(optimizer))
    assert lrs[0] == 0.0 and lrs[50] == pytest.approx(peak / 2) and lrs[100] == pytest.approx(peak)
    assert lrs[1000] == pytest.approx(3e-5)
    assert lrs[400] == pytest.approx(topic_questions(TOPIC)["sched-warmup-cosine-value"].answer, rel=1e-9)
    # the two slips of the explanation, and the tolerance tells them apart
    cut_off = peak * max(floor_ratio, 0.5 * (1 + math.cos(math.pi / 3)))
    from_zero = peak * (floor_ratio + (1 - floor_ratio) * 0.5 * (1 + math.cos(0.4 * math.pi)))
    assert cut_off == pytest.approx(2.25e-4) and from_zero == pytest.approx(2.07e-4, abs=5e-7)
    q = topic_questions(TOPIC)["sched-warmup-cosine-value"]
    assert abs(cut_off - q.answer) > q.tolerance * q.answer and abs(from_zero - q.answer) > q.tolerance * q.answer


@pytest.mark.verifies("sched-past-total")
def test_which_schedules_rise_past_their_end():
    # choice 0: true. transformers' cosine: max(0, ...) never acts, the lr climbs back up
    _, optimizer = _sgd(lr=1.0)
    scheduler = LambdaLR(optimizer, _hf_cosine(10, 100))
    _advance(optimizer, scheduler, 100)
    assert _lr(optimizer) == pytest.approx(0.0, abs=1e-12)
    _advance(optimizer, scheduler, 4)
    assert _lr(optimizer) == pytest.approx(0.00487, rel=1e-2)
    _advance(optimizer, scheduler, 86)
    assert _lr(optimizer) == pytest.approx(1.0)  # a full period later: back at the peak

    # choice 1: true. torch's CosineAnnealingLR is periodic too
    _, optimizer = _sgd(lr=1.0)
    scheduler = CosineAnnealingLR(optimizer, T_max=10)
    _advance(optimizer, scheduler, 10)
    assert _lr(optimizer) == pytest.approx(0.0, abs=1e-12)
    _advance(optimizer, scheduler, 5)
    assert _lr(optimizer) == pytest.approx(0.5)

    # choice 2: false. transformers' linear schedule stays at 0
    _, optimizer = _sgd(lr=1.0)
    scheduler = LambdaLR(optimizer, _hf_linear(10, 100))
    _advance(optimizer, scheduler, 150)
    assert _lr(optimizer) == 0.0

    # choice 3: false. LinearLR holds end_factor
    _, optimizer = _sgd(lr=1.0)
    scheduler = LinearLR(optimizer, start_factor=1.0, end_factor=0.1, total_iters=10)
    _advance(optimizer, scheduler, 50)
    assert _lr(optimizer) == pytest.approx(0.1)

    # choice 4: false. PolynomialLR holds the 0 it decayed to
    _, optimizer = _sgd(lr=1.0)
    scheduler = PolynomialLR(optimizer, total_iters=10, power=2.0)
    _advance(optimizer, scheduler, 9)
    assert _lr(optimizer) == pytest.approx(0.01)
    _advance(optimizer, scheduler, 41)
    assert _lr(optimizer) == 0.0

    # the explanation: OneCycleLR's T-th step() sets an lr past the cosine's end, then it raises
    _, optimizer = _sgd(lr=1.0)
    scheduler = OneCycleLR(optimizer, max_lr=1.0, total_steps=10)
    _advance(optimizer, scheduler, 9)
    last = _lr(optimizer)
    _advance(optimizer, scheduler, 1)
    assert _lr(optimizer) > 1000 * last
    with pytest.raises(ValueError):
        _advance(optimizer, scheduler, 1)
    # the explanation's fix: clamping the step inside the lambda holds the final value past T
    _, optimizer = _sgd(lr=1.0)
    hf = _hf_cosine(10, 100)
    scheduler = LambdaLR(optimizer, lambda s: hf(min(s, 100)))
    _advance(optimizer, scheduler, 190)
    assert _lr(optimizer) == pytest.approx(0.0, abs=1e-12)
    assert right_choices(TOPIC, "sched-past-total") == {0, 1}


def _checkpoint_at(step):
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.AdamW([param], lr=1e-3)
    scheduler = LambdaLR(optimizer, _warmup(10))
    for _ in range(step):
        param.grad = torch.zeros(1)
        optimizer.step()
        scheduler.step()
    return _lr(optimizer), optimizer.state_dict(), scheduler.state_dict()


@pytest.mark.verifies("sched-resume-order")
def test_resume_order_restores_the_schedule():
    lr_at_save, opt_state, sched_state = _checkpoint_at(5)
    assert lr_at_save == pytest.approx(5e-4)

    def fresh():
        param = torch.nn.Parameter(torch.zeros(1))
        return torch.optim.AdamW([param], lr=1e-3)

    # right: construct optimizer, construct scheduler, then load both states
    optimizer = fresh()
    scheduler = LambdaLR(optimizer, _warmup(10))
    optimizer.load_state_dict(opt_state)
    scheduler.load_state_dict(sched_state)
    assert _lr(optimizer) == pytest.approx(lr_at_save)
    assert scheduler.last_epoch == 5

    # scheduler constructed after the optimizer state is loaded: it rewrites lr to lambda(0)
    optimizer = fresh()
    optimizer.load_state_dict(opt_state)
    scheduler = LambdaLR(optimizer, _warmup(10))
    scheduler.load_state_dict(sched_state)
    assert _lr(optimizer) == 0.0  # the next update would run at lr 0

    # no scheduler state at all: warmup starts over from 0
    optimizer = fresh()
    optimizer.load_state_dict(opt_state)
    scheduler = LambdaLR(optimizer, _warmup(10))
    assert _lr(optimizer) == 0.0 and scheduler.last_epoch == 0


# --- the cards: each claim that torch's schedulers and optimizers can show ---


@pytest.mark.verifies("sched-why-warmup")
def test_first_adam_step_is_about_lr_whatever_the_gradient():
    lr = 1e-3
    for grad in (1e-4, 1e-2, 1.0, 1e3):
        param = torch.nn.Parameter(torch.tensor([1.0]))
        optimizer = torch.optim.Adam([param], lr=lr)
        param.grad = torch.tensor([grad])
        optimizer.step()
        assert 1.0 - param.item() == pytest.approx(lr, rel=1e-3)
    # for |g| near eps = 1e-8 the step shrinks (g / (|g| + eps)), and an exactly zero gradient does not move
    for grad, step in ((1e-8, lr / 2), (0.0, 0.0)):
        param = torch.nn.Parameter(torch.tensor([1.0], dtype=torch.float64))
        optimizer = torch.optim.Adam([param], lr=lr)
        param.grad = torch.tensor([grad], dtype=torch.float64)
        optimizer.step()
        assert 1.0 - param.item() == pytest.approx(step, rel=1e-6, abs=1e-15)
    # without bias correction the first step would be (1 - b1) / sqrt(1 - b2) = 3.16 times lr
    beta1, beta2 = 0.9, 0.999
    assert (1 - beta1) / math.sqrt(1 - beta2) == pytest.approx(3.16, abs=0.01)
    # Ma and Yarats' rule: linear warmup over 2 / (1 - beta2) steps
    assert 2 / (1 - beta2) == pytest.approx(2000)


@pytest.mark.verifies("sched-linear-vs-cosine")
def test_decay_shapes():
    # step decay: / 10 at epochs 30, 60 and 80 of 90
    _, optimizer = _sgd(lr=0.1)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[30, 60, 80], gamma=0.1)
    per_epoch = []
    for _ in range(90):
        per_epoch.append(_lr(optimizer))
        _advance(optimizer, scheduler, 1)
    assert per_epoch[29] == pytest.approx(0.1) and per_epoch[30] == pytest.approx(0.01)
    assert per_epoch[59] == pytest.approx(0.01) and per_epoch[60] == pytest.approx(0.001)
    assert per_epoch[79] == pytest.approx(0.001) and per_epoch[80] == pytest.approx(1e-4)
    # cosine vs linear decay at p = 0.25, 0.5, 0.75 (and both reach 0 at the end)
    _, cos_opt = _sgd()
    cos_sched = CosineAnnealingLR(cos_opt, T_max=100)
    _, lin_opt = _sgd()
    lin_sched = LinearLR(lin_opt, start_factor=1.0, end_factor=0.0, total_iters=100)
    seen = {}
    for step in range(101):
        seen[step] = (_lr(cos_opt), _lr(lin_opt))
        _advance(cos_opt, cos_sched, 1)
        _advance(lin_opt, lin_sched, 1)
    assert seen[25] == (pytest.approx(0.854, abs=5e-4), pytest.approx(0.75))
    assert seen[50] == (pytest.approx(0.5), pytest.approx(0.5))
    assert seen[75] == (pytest.approx(0.146, abs=5e-4), pytest.approx(0.25))
    assert seen[100] == (pytest.approx(0.0, abs=1e-12), pytest.approx(0.0, abs=1e-12))
    assert all(seen[s][0] >= seen[s][1] - 1e-12 for s in range(51))  # cosine stays higher in the first half
    assert all(seen[s][0] <= seen[s][1] + 1e-12 for s in range(50, 101))  # and lower in the second
    # inverse square root (Transformer): peak at step W, then s^-0.5, never zero
    d_model, warmup = 512, 4000

    def noam(step):
        step = max(step, 1)
        return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)

    _, optimizer = _sgd(lr=1.0)
    scheduler = LambdaLR(optimizer, noam)
    lrs = [_lr(optimizer)]
    for _ in range(40000):
        _advance(optimizer, scheduler, 1)
        lrs.append(_lr(optimizer))
    assert max(range(len(lrs)), key=lrs.__getitem__) == warmup
    assert lrs[4 * warmup] == pytest.approx(lrs[warmup] / 2)
    assert min(lrs[1:]) > 0


@pytest.mark.verifies("sched-min-lr-floor")
def test_cosine_floor_interpolates_and_cosine_annealing_is_periodic():
    r, t_max = 0.1, 10
    _, optimizer = _sgd(lr=1.0)
    scheduler = CosineAnnealingLR(optimizer, T_max=t_max, eta_min=r)
    lrs = [_lr(optimizer)]
    for _ in range(20):
        _advance(optimizer, scheduler, 1)
        lrs.append(_lr(optimizer))
    for step in range(t_max + 1):  # the interpolation, step by step, up to T_max
        assert lrs[step] == pytest.approx(r + (1 - r) * 0.5 * (1 + math.cos(math.pi * step / t_max)))
    assert lrs[10] == pytest.approx(0.1)  # the floor at T_max...
    assert lrs[15] == pytest.approx(0.55)  # ...then it climbs back
    assert lrs[20] == pytest.approx(1.0)
    # clipping a plain cosine with max(r, cos) reaches the floor early (p ~ 0.8), then runs flat
    assert math.acos(2 * r - 1) / math.pi == pytest.approx(0.795, abs=1e-3)
    p = 0.9
    clipped = max(r, 0.5 * (1 + math.cos(math.pi * p)))
    assert clipped == r < r + (1 - r) * 0.5 * (1 + math.cos(math.pi * p))
    # clamping the step inside a LambdaLR holds the floor after the end
    _, optimizer = _sgd(lr=1.0)
    held = LambdaLR(optimizer, lambda s: r + (1 - r) * 0.5 * (1 + math.cos(math.pi * min(s, t_max) / t_max)))
    _advance(optimizer, held, 25)
    assert _lr(optimizer) == pytest.approx(r)
    # transformers' cosine rises past its end as well
    _, optimizer = _sgd(lr=1.0)
    hf = LambdaLR(optimizer, _hf_cosine(0, t_max))
    _advance(optimizer, hf, 15)
    assert _lr(optimizer) == pytest.approx(0.5)


@pytest.mark.verifies("sched-extend-run")
def test_what_finished_schedulers_do_when_stepped_on():
    total = 100
    # CosineAnnealingLR: near 0 at the end, back at the peak after another T_max steps
    _, optimizer = _sgd(lr=1.0)
    scheduler = CosineAnnealingLR(optimizer, T_max=total)
    _advance(optimizer, scheduler, total)
    assert _lr(optimizer) == pytest.approx(0.0, abs=1e-12)
    _advance(optimizer, scheduler, total // 2)
    assert _lr(optimizer) == pytest.approx(0.5)
    _advance(optimizer, scheduler, total // 2)
    assert _lr(optimizer) == pytest.approx(1.0)
    # OneCycleLR: a run of `total` steps called step() `total` times; the next one raises
    _, optimizer = _sgd(lr=1.0)
    scheduler = OneCycleLR(optimizer, max_lr=1.0, total_steps=total)
    _advance(optimizer, scheduler, total)
    optimizer.step()
    with pytest.raises(ValueError, match="Tried to step"):
        scheduler.step()
    # transformers' linear schedule stays at 0; torch's LinearLR holds its end_factor
    _, optimizer = _sgd(lr=1.0)
    scheduler = LambdaLR(optimizer, _hf_linear(10, total))
    _advance(optimizer, scheduler, total + 50)
    assert _lr(optimizer) == 0.0
    _, optimizer = _sgd(lr=1.0)
    scheduler = LinearLR(optimizer, start_factor=1.0, end_factor=0.05, total_iters=total)
    _advance(optimizer, scheduler, total + 50)
    assert _lr(optimizer) == pytest.approx(0.05)
