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
    # the gap the explanation names: a row of only -inf gives NaN through the steps, -inf in torch
    scope = {"torch": torch, "x": torch.full((3,), -INF)}
    for step in steps:
        exec(step, scope)
    assert math.isnan(scope["result"].item())
    assert torch.logsumexp(torch.full((3,), -INF), 0).item() == -INF


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


@pytest.mark.verifies("nan-stable-softmax-card")
def test_shift_invariance_and_the_stable_log_softmax():
    z = torch.tensor([3.0, -1.0, 0.5])
    assert torch.allclose(torch.softmax(z, 0), torch.softmax(z - 7.0, 0))  # shift invariant
    shifted = torch.exp(z - z.max())
    assert shifted.max().item() == 1.0 and shifted.sum().item() >= 1.0  # no overflow, no division by 0
    big = torch.tensor([1000.0, 0.0, -1000.0])
    assert torch.equal(F.log_softmax(big, 0), big - torch.logsumexp(big, 0))
    assert torch.isfinite(F.log_softmax(big, 0)).all()
    assert torch.log(torch.softmax(big, 0))[2].item() == -INF  # log of an underflowed 0
    # float16: exp(11.09) is still finite, exp(11.1) is not
    assert math.isfinite(torch.exp(torch.tensor(11.08, dtype=torch.float16)).item())
    assert torch.exp(torch.tensor(11.1, dtype=torch.float16)).item() == INF
    # the one gap: a fully masked row (all -inf) is NaN even with the max subtracted
    masked = torch.full((3,), -INF)
    assert torch.isnan(torch.softmax(masked, 0)).all() and torch.isnan(F.log_softmax(masked, 0)).all()
    assert torch.isnan(masked - masked.max()).all()
    assert torch.logsumexp(masked, 0).item() == -INF


@pytest.mark.verifies("nan-triage-card")
def test_the_usual_sources_of_a_first_non_finite_value():
    assert torch.tensor(1e-8, dtype=torch.float16).item() == 0.0  # a 1e-8 epsilon vanishes in float16
    assert torch.tensor(1e-8, dtype=torch.float32).item() > 0.0
    assert torch.tensor(66000.0, dtype=torch.float16).item() == INF  # above 65504
    x = torch.tensor([0.0], requires_grad=True)
    torch.sqrt(x).sum().backward()
    assert x.grad.item() == INF  # sqrt at 0: an infinite gradient
    assert torch.log(torch.tensor(0.0)).item() == -INF and math.isnan((torch.tensor(0.0) / 0.0).item())
    with pytest.raises(IndexError):  # a label outside [0, num_classes) on CPU
        F.cross_entropy(torch.zeros(1, 3), torch.tensor([3]))
    # a finite-check forward hook names the first module whose output is not finite
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2))
    with torch.no_grad():
        model[0].weight.fill_(100.0)
        model[1].weight.fill_(1e37)  # about 2 x 1e37 x 200: overflows float32
    found = []
    for name, m in model.named_children():
        m.register_forward_hook(lambda mod, i, o, name=name: found.append(name) if not torch.isfinite(o).all() else None)
    model(torch.ones(1, 2))
    assert found[0] == "1"


@pytest.mark.verifies("nan-gradient-clipping-card")
def test_clip_grad_norm_scales_by_one_factor_and_returns_the_norm_before_clipping():
    p1, p2 = nn.Parameter(torch.zeros(2)), nn.Parameter(torch.zeros(1))
    p1.grad, p2.grad = torch.tensor([3.0, 4.0]), torch.tensor([12.0])  # global norm 13
    norm = torch.nn.utils.clip_grad_norm_([p1, p2], max_norm=1.0)
    assert norm.item() == pytest.approx(13.0)  # the norm before clipping
    clipped = torch.cat([p1.grad, p2.grad])
    assert clipped.norm().item() == pytest.approx(1.0, abs=1e-5)  # now at max_norm
    assert torch.allclose(clipped, torch.tensor([3.0, 4.0, 12.0]) / 13, atol=1e-6)  # same direction
    p1.grad, p2.grad = torch.tensor([0.3, 0.4]), torch.tensor([0.0])
    torch.nn.utils.clip_grad_norm_([p1, p2], max_norm=1.0)
    assert p1.grad.tolist() == pytest.approx([0.3, 0.4])  # under max_norm: untouched
    # by value: each element is clamped and the direction changes
    p1.grad = torch.tensor([3.0, 0.5])
    torch.nn.utils.clip_grad_value_([p1], clip_value=1.0)
    assert p1.grad.tolist() == [1.0, 0.5]
    # non-finite gradients: a NaN spreads everywhere, an inf zeroes the rest and becomes NaN itself
    p1.grad, p2.grad = torch.tensor([NAN, 1.0]), torch.tensor([1.0])
    torch.nn.utils.clip_grad_norm_([p1, p2], max_norm=1.0)
    assert torch.isnan(p1.grad).all() and torch.isnan(p2.grad).all()
    p1.grad, p2.grad = torch.tensor([INF, 1.0]), torch.tensor([1.0])
    assert torch.nn.utils.clip_grad_norm_([p1, p2], max_norm=1.0).item() == INF
    assert math.isnan(p1.grad[0].item()) and p1.grad[1].item() == 0.0 and p2.grad.item() == 0.0
    p1.grad = torch.tensor([NAN, 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        torch.nn.utils.clip_grad_norm_([p1], max_norm=1.0, error_if_nonfinite=True)


@pytest.mark.verifies("nan-to-num-trap-card")
def test_a_nan_to_num_gradient_under_sgd_adam_adamw_and_clipping():
    overflow = torch.nan_to_num(torch.tensor([INF, 0.5]))  # what nan_to_num leaves of an overflowed gradient
    assert overflow[0].item() == torch.finfo(torch.float32).max

    def run(make, steps=5):
        p = nn.Parameter(torch.ones(2))
        opt = make([p])
        p.grad = overflow.clone()
        opt.step()
        first = p.detach().clone()
        for _ in range(steps):
            p.grad = torch.tensor([0.5, 0.5])  # healthy gradients afterwards
            opt.step()
        return first, p.detach().clone(), opt

    first, _, _ = run(lambda ps: torch.optim.SGD(ps, lr=0.1))
    assert first[0].item() < -1e37  # SGD: a gigantic finite step
    first, last, opt = run(lambda ps: torch.optim.Adam(ps, lr=0.1))
    assert opt.state[opt.param_groups[0]["params"][0]]["exp_avg_sq"][0].item() == INF  # v overflowed, and stays
    assert first[0].item() == 1.0 and last[0].item() == 1.0  # that weight never moves again
    assert last[1].item() < 0.5  # while its neighbour trains normally
    first, last, _ = run(lambda ps: torch.optim.AdamW(ps, lr=0.1, weight_decay=0.01))
    assert last[0].item() == pytest.approx((1 - 0.1 * 0.01) ** 6)  # AdamW: only the decay still acts on it
    # clipping: the squared 3.4e38 overflows the total norm, the factor is 0, every gradient is zeroed
    p1, p2 = nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(3))
    p1.grad, p2.grad = overflow.clone(), torch.tensor([1.0, 2.0, 3.0])
    assert torch.nn.utils.clip_grad_norm_([p1, p2], max_norm=1.0).item() == INF
    assert torch.count_nonzero(p1.grad) == 0 and torch.count_nonzero(p2.grad) == 0
    # the boundary: with no other gradient element at all, nothing is squared and nothing overflows
    lone = nn.Parameter(torch.ones(1))
    lone.grad = overflow[:1].clone()
    assert torch.nn.utils.clip_grad_norm_([lone], max_norm=1.0).item() == torch.finfo(torch.float32).max


def _tensors(out):
    """The card's helper: every tensor inside a module's output (tensor, tuple, list or dict)."""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    return []


class _AttentionNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(8, 8)
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)  # returns (output, weights)
        self.head = nn.Linear(8, 3)

    def forward(self, x, padding):
        h = self.embed(x)
        a, _ = self.attn(h, h, h, key_padding_mask=padding)
        return self.head(a)


@pytest.mark.verifies("nan-late-nan-card")
def test_finite_check_hooks_must_look_inside_tuples():
    torch.manual_seed(0)
    net = _AttentionNet()
    x = torch.randn(2, 5, 8)
    padding = torch.zeros(2, 5, dtype=torch.bool)
    padding[1] = True  # an all-padding sequence: a softmax over only -inf
    assert torch.isnan(net(x, padding)[1]).all()

    def first_bad(tensor_only: bool) -> str:
        found = []

        def check(name):
            def hook(module, inputs, output):
                outs = ([output] if isinstance(output, torch.Tensor) else []) if tensor_only else _tensors(output)
                if any(not torch.isfinite(t).all() for t in outs):
                    found.append(name)
            return hook

        handles = [m.register_forward_hook(check(name)) for name, m in net.named_modules()]
        net(x, padding)
        for h in handles:
            h.remove()
        return found[0]

    # children report before their parent (""): the first hook to fire on a bad output names the culprit
    assert first_bad(tensor_only=False) == "attn"
    assert first_bad(tensor_only=True) == "head"  # a hook that skips tuples blames the next module


@pytest.mark.verifies("nan-late-nan-card")
def test_a_fully_masked_attention_row_depends_on_the_implementation():
    torch.manual_seed(0)
    q, k, v = torch.randn(1, 1, 2, 4), torch.randn(1, 1, 3, 4), torch.randn(1, 1, 3, 4)
    keep = torch.tensor([[True, True, True], [False, False, False]])  # the second query sees nothing
    scores = (q @ k.transpose(-1, -2)).masked_fill(~keep, -INF)
    assert torch.isnan(torch.softmax(scores, -1)[..., 1, :]).all()  # hand-written attention: NaN
    sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)  # CPU: the math path
    assert torch.count_nonzero(sdpa[..., 1, :]) == 0 and torch.isfinite(sdpa).all()
    mha = nn.MultiheadAttention(4, 1, batch_first=True)
    x = torch.randn(1, 3, 4)
    with torch.no_grad():
        out, _ = mha(x, x, x, key_padding_mask=torch.ones(1, 3, dtype=torch.bool))
    assert torch.isnan(out).all()  # nn.MultiheadAttention: NaN


def _train(lr, batches, start=None, steps=None):
    """SGD on a linear regression; returns the step of the first non-finite loss (or None) and the weights."""
    torch.manual_seed(0)
    w = nn.Parameter(torch.zeros(4) if start is None else start.clone())
    opt = torch.optim.SGD([w], lr=lr)
    history = []
    for step, (x, y) in enumerate(batches[: steps or len(batches)]):
        loss = ((x @ w - y) ** 2).mean()
        if not torch.isfinite(loss):
            return step, history
        history.append(w.detach().clone())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return None, history


@pytest.mark.verifies("nan-late-nan-card")
def test_the_same_step_again_does_not_tell_data_from_dynamics():
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(16, 4, generator=g), torch.randn(16, generator=g)) for _ in range(100)]
    # dynamics: an lr far too high diverges, at the same step on every rerun with the same order
    unstable, hist = _train(2.0, batches)
    assert unstable is not None and _train(2.0, batches)[0] == unstable
    # ...and skipping the batch before it does not remove the NaN: it comes back at about the same point
    skipped = batches[: unstable - 1] + batches[unstable:]
    again = _train(2.0, skipped)[0]
    assert again is not None and abs(again - unstable) <= 3
    # that batch fed to an early, healthy checkpoint is harmless
    assert _train(2.0, [batches[unstable]], start=hist[2])[0] is None

    # data: a corrupt batch gives a NaN at the same step on every rerun too
    bad = list(batches)
    bad[30] = (bad[30][0].clone(), bad[30][1].clone())
    bad[30][0][3, 1] = INF
    step, hist = _train(0.01, bad)
    assert step == 30 and _train(0.01, bad)[0] == 30
    assert _train(0.01, bad[:30] + bad[31:])[0] is None  # skipping it removes the NaN
    assert _train(0.01, [bad[30]], start=hist[2])[0] == 0  # and it fails at once on a healthy checkpoint
