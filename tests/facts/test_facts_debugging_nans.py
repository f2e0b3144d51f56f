"""Facts taught by questions/debugging-nans.yaml, checked by producing the NaNs with torch.

Each verified single question's test settles every choice (`# choice N` beside the assertion,
N its index in the file) and then checks that the file's key is the one choice found true.
"""

import contextlib
import io
import math
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from bankkeys import right_choices, topic_questions

NAN, INF = float("nan"), float("inf")
TOPIC = "debugging-nans"



def _naive_softmax(z: torch.Tensor) -> torch.Tensor:
    e = torch.exp(z)
    return e / e.sum()


@pytest.mark.verifies("nan-stable-softmax-card")
def test_naive_softmax_overflows_stable_one_does_not():
    z = torch.tensor([1000.0, 0.0])
    naive = _naive_softmax(z)
    assert math.isnan(naive[0].item()) and naive[1].item() == 0.0
    assert torch.equal(torch.softmax(z, dim=0), torch.tensor([1.0, 0.0]))
    assert torch.equal(_naive_softmax(z - z.max()), torch.tensor([1.0, 0.0]))
    # overflow thresholds of exp quoted in the card
    assert math.isfinite(torch.exp(torch.tensor(88.7)).item())
    assert torch.exp(torch.tensor(88.73)).item() == INF
    assert math.log(torch.finfo(torch.float32).max) == pytest.approx(88.72, abs=0.005)
    assert math.log(torch.finfo(torch.float16).max) == pytest.approx(11.09, abs=0.005)


@pytest.mark.verifies("nan-equality-check")
def test_nan_never_equals_nan():
    loss = torch.tensor(NAN)
    assert not bool(loss == NAN)  # choice 0: false
    assert bool(torch.isnan(loss))  # choice 1: false, isnan works on a 0-d tensor
    assert bool(loss != loss)
    assert torch.equal(torch.isfinite(torch.tensor([1.0, INF, NAN])), torch.tensor([True, False, False]))

    # the snippet itself: no error (choice 2: false) and it prints B (choice 3: true)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        if loss == float("nan"):
            print("A")
        elif torch.isnan(loss):
            print("B")
        else:
            print("C")
    assert printed.getvalue() == "B\n"
    assert right_choices(TOPIC, "nan-equality-check") == {3}


@pytest.mark.verifies("nan-log-of-softmax")
def test_log_of_softmax_vs_log_softmax():
    z = torch.tensor([0.0, 200.0])
    a = torch.log(torch.softmax(z, dim=0))
    b = F.log_softmax(z, dim=0)
    assert torch.equal(a, torch.tensor([-INF, 0.0]))  # choice 2: true; choice 0 (a = -200) and 1 (a = nan): false
    assert torch.equal(b, torch.tensor([-200.0, 0.0]))  # choice 3: false, b stays finite
    assert torch.softmax(z, dim=0)[0].item() == 0.0  # the probability underflowed, nothing overflowed
    assert not torch.isnan(torch.softmax(z, dim=0)).any()
    assert right_choices(TOPIC, "nan-log-of-softmax") == {2}
    # as a loss for class 0: inf through log(softmax), with NaN gradients; finite through log_softmax
    z1 = z.clone().requires_grad_()
    bad = -torch.log(torch.softmax(z1, dim=0))[0]
    assert bad.item() == INF
    bad.backward()
    assert torch.isnan(z1.grad).any()
    z2 = z.clone().requires_grad_()
    good = -F.log_softmax(z2, dim=0)[0]
    good.backward()
    assert good.item() == 200.0
    assert torch.isfinite(z2.grad).all()
    assert F.cross_entropy(z.unsqueeze(0), torch.tensor([0])).item() == 200.0


@pytest.mark.verifies("nan-detect-anomaly")
def test_detect_anomaly_names_the_backward_function():
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anomaly mode warns about its cost and prints the forward trace
        with torch.autograd.detect_anomaly():
            y = torch.where(x > 0, torch.log(x), torch.zeros_like(x)).sum()
            # choice 0: true. It raises at the backward function that returned NaN, naming it;
            # choice 2: false, it does not zero the NaN and go on; choice 3: false, it raises by itself
            with pytest.raises(RuntimeError, match=r"Function 'LogBackward0' returned nan values in its 0th output"):
                y.backward()
            # choice 1: false. Forward values are not checked: a NaN or inf made in the forward passes silently
            z = torch.sqrt(torch.tensor([-1.0, 1.0], requires_grad=True))
            assert math.isnan(z[0].item())
            assert torch.exp(torch.tensor([100.0], requires_grad=True)).item() == INF
    assert right_choices(TOPIC, "nan-detect-anomaly") == {0}


@pytest.mark.verifies("nan-to-num-trap-card")
def test_nan_to_num_defaults_and_the_gradients_it_does_not_fix():
    out = torch.nan_to_num(torch.tensor([NAN, INF, -INF]))
    f32 = torch.finfo(torch.float32)
    assert out.tolist() == [0.0, f32.max, -f32.max]
    assert f32.max == pytest.approx(3.4028e38, rel=1e-4)
    assert torch.nan_to_num(torch.tensor([INF], dtype=torch.float16)).item() == 65504.0

    x = torch.tensor([0.0, 1.0], requires_grad=True)
    loss = torch.nan_to_num((x * torch.log(x)).sum())
    assert loss.item() == 0.0
    loss.backward()
    assert math.isnan(x.grad[0].item()) and x.grad[1].item() == 0.0


@pytest.mark.verifies("nan-fp16-exp-overflow")
def test_fp16_exp_overflows_above_11():
    def fp16_exp(n):
        return torch.exp(torch.tensor(float(n), dtype=torch.float16)).item()

    assert math.isfinite(fp16_exp(11))
    assert fp16_exp(12) == INF
    assert fp16_exp(11) == pytest.approx(59874, rel=1e-3)
    largest = max(n for n in range(30) if math.isfinite(fp16_exp(n)))
    assert largest == topic_questions(TOPIC)["nan-fp16-exp-overflow"].answer


@pytest.mark.verifies("nan-logsumexp-order")
def test_stable_logsumexp_steps():
    x = torch.tensor([1000.0, 1000.0])
    # run the file's steps in the keyed order: each one uses only the results of earlier ones
    steps = [item.strip("`") for item in topic_questions(TOPIC)["nan-logsumexp-order"].items]
    scope = {"torch": torch, "x": x}
    for step in steps:
        exec(step, scope)
    assert scope["result"].item() == pytest.approx(torch.logsumexp(x, 0).item(), abs=1e-4)
    # any other order fails: some step would use a name that is not defined yet
    for i in range(len(steps) - 1):
        swapped = steps[:i] + [steps[i + 1], steps[i]] + steps[i + 2:]
        with pytest.raises(NameError):
            scope = {"torch": torch, "x": x}
            for step in swapped:
                exec(step, scope)
    m = x.max()
    shifted = x - m
    e = torch.exp(shifted)
    s = e.sum()
    r = torch.log(s)
    result = r + m
    assert s.item() >= 1.0
    assert result.item() == pytest.approx(1000.0 + math.log(2), abs=1e-4)
    assert result.item() == pytest.approx(torch.logsumexp(x, 0).item(), abs=1e-4)
    assert torch.log(torch.exp(x).sum()).item() == INF


@pytest.mark.verifies("nan-where-gradient-trap")
def test_where_does_not_mask_the_nan_gradient():
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    y = torch.where(x > 0, torch.log(x), torch.zeros_like(x)).sum()
    y.backward()
    assert y.item() == 0.0  # choice 2 (-inf) and choice 3 (nan): false
    assert math.isnan(x.grad[0].item()) and x.grad[1].item() == 1.0  # choice 1: true; choice 0: false
    assert right_choices(TOPIC, "nan-where-gradient-trap") == {1}
    # the fix: make the input safe before the unsafe op
    x2 = torch.tensor([0.0, 1.0], requires_grad=True)
    torch.where(x2 > 0, torch.log(torch.where(x2 > 0, x2, torch.ones_like(x2))), torch.zeros_like(x2)).sum().backward()
    assert x2.grad.tolist() == [0.0, 1.0]


@pytest.mark.verifies("nan-clip-does-not-fix-nan")
def test_clip_grad_norm_spreads_nan():
    p1, p2 = nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(2))
    p1.grad = torch.tensor([NAN, 1.0])
    p2.grad = torch.tensor([1.0, 1.0])
    norm = torch.nn.utils.clip_grad_norm_([p1, p2], max_norm=1.0)  # choice 2: false, no error by default
    assert math.isnan(norm.item())  # choice 3: false, the norm is not sqrt(3)
    assert torch.isnan(p1.grad).all() and torch.isnan(p2.grad).all()  # choice 0: true; choice 1: false
    assert right_choices(TOPIC, "nan-clip-does-not-fix-nan") == {0}

    p1.grad = torch.tensor([INF, 1.0])
    p2.grad = torch.tensor([1.0, 1.0])
    norm = torch.nn.utils.clip_grad_norm_([p1, p2], max_norm=1.0)
    assert norm.item() == INF
    assert math.isnan(p1.grad[0].item()) and p1.grad[1].item() == 0.0
    assert p2.grad.tolist() == [0.0, 0.0]

    p1.grad = torch.tensor([NAN, 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        torch.nn.utils.clip_grad_norm_([p1], max_norm=1.0, error_if_nonfinite=True)


@pytest.mark.verifies("nan-scaler-skip-signal")
def test_a_skipped_step_is_silent_except_for_the_scale():
    p = nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([p], lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    calls = []
    real_step = opt.step

    def counting_step(*args, **kwargs):
        calls.append(1)
        return real_step(*args, **kwargs)

    opt.step = counting_step
    lr_before = opt.param_groups[0]["lr"]

    def iteration(overflow):
        opt.zero_grad()
        scaler.scale(p.sum()).backward()
        if overflow:
            p.grad[0] = INF
        before = scaler.get_scale()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = scaler.step(opt)
            scaler.update()
        return result, before, scaler.get_scale(), caught

    result, before, after, caught = iteration(overflow=True)
    assert calls == [] and torch.equal(p.detach(), torch.ones(2))  # the step was skipped
    assert after == before * 0.5  # choice 1: true, the scale dropped by backoff_factor
    assert result is None  # choice 0: false, no False
    assert caught == []  # choice 3: false, no warning
    assert opt.param_groups[0]["lr"] == lr_before  # choice 4: false, the lr is untouched
    # choice 2: false. The weights are unchanged, so the next loss is finite
    assert math.isfinite(p.sum().item())

    result, before, after, caught = iteration(overflow=False)
    assert result is None and after == before and calls == [1] and caught == []  # choice 1: no drop, no skip
    assert not torch.equal(p.detach(), torch.ones(2))
    assert right_choices(TOPIC, "nan-scaler-skip-signal") == {1}


@pytest.mark.verifies("nan-scaler-skip-signal")
def test_scheduler_warns_when_the_first_step_was_skipped():
    p = nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([p], lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10)
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale(p.sum()).backward()
    p.grad[0] = INF
    scaler.step(opt)
    scaler.update()
    with pytest.warns(UserWarning, match=r"lr_scheduler\.step\(\)` before `optimizer\.step\(\)"):
        sched.step()
