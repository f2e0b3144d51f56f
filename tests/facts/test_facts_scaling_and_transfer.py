"""Facts taught by questions/scaling-and-transfer.yaml, checked with torch on the CPU.

Each verified single or multi question's test settles every choice (`# choice N` beside the
assertion, N its index in the file) and then checks that the file's key is exactly the set found
true. Numeric questions compute their value (FLOPs counted by `FlopCounterMode`, a budget solved
numerically, Adam steps on a toy layer) and check that the file's tolerance takes the value as
the prompt asks for it and rejects the usual slips.

What rests on sources rather than on torch: the 6ND convention and the size of attention's
context-dependent FLOPs (Kaplan et al., 2020), MFU as PaLM defined it (Chowdhery et al., 2022);
scale-critical-batch-steps and scale-noise-scale-half take their model from McCandlish et al.
(2018), which the tests then solve and check on a sampled quadratic; scale-mup-lr-value takes
the 1/width rule for hidden matrices under Adam from Yang et al. (2021) and the `mup` package
(MuAdam), and the test shows on a toy layer that it keeps the update's effect fixed; the
warmup reading of scale-warmup-big-step rests on Goyal et al. (2017). Not verified (they rest on
papers): the Chinchilla questions other than the budget arithmetic (Hoffmann et al., 2022;
Kaplan et al., 2020), scale-overtraining (Touvron et al., 2023; Sardana et al., 2023; Muennighoff
et al., 2023), the μP rules, scope and workflow (Yang et al., 2021, Tensor Programs V, and the
`mup` package's README and code), scale-linear-rule-scope (Goyal et al., 2017) and
scale-sqrt-rule-adam (Malladi et al., 2022).
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn as nn
from bankkeys import accepts, right_choices
from torch.utils.checkpoint import checkpoint
from torch.utils.flop_counter import FlopCounterMode

TOPIC = "scaling-and-transfer"


def _right(qid: str) -> set[int]:
    return right_choices(TOPIC, qid)


def _flops(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def _stack(d_in: int = 64, width: int = 128, d_out: int = 32) -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(d_in, width, bias=False), nn.ReLU(), nn.Linear(width, width, bias=False),
                         nn.ReLU(), nn.Linear(width, d_out, bias=False))


def _per_param_token(inputs_require_grad: bool, recompute: bool = False) -> tuple[float, float]:
    """Forward and backward FLOPs per parameter per token of a stack of linear layers on (B, T, K)."""
    model = _stack()
    n = sum(p.numel() for p in model.parameters())
    x = torch.randn(4, 10, 64, requires_grad=inputs_require_grad)
    tokens = 4 * 10
    run = (lambda: checkpoint(model, x, use_reentrant=False)) if recompute else (lambda: model(x))
    out = {}
    fwd = _flops(lambda: out.update(y=run()))
    bwd = _flops(lambda: out["y"].sum().backward())
    return fwd / (n * tokens), bwd / (n * tokens)


@pytest.mark.verifies("scale-6nd-why")
def test_six_flops_per_parameter_per_token():
    fwd, bwd = _per_param_token(inputs_require_grad=True)
    assert (fwd, bwd) == (2.0, 4.0)  # 2N forward, 4N backward: 6N per token
    # the first layer needs no input gradient when the input does not require grad
    fwd, bwd = _per_param_token(inputs_require_grad=False)
    assert fwd == 2.0 and 3.0 < bwd < 4.0
    # activation checkpointing runs the forward again: about 8N per token executed (torch's
    # non-reentrant checkpoint stops recomputing once it has what backward needs, so the last
    # layer, whose output nothing saves, is not run again: 8 - 2 * 4096 / 28672)
    fwd, bwd = _per_param_token(inputs_require_grad=True, recompute=True)
    assert fwd + bwd == pytest.approx(8 - 2 * (128 * 32) / (64 * 128 + 128 * 128 + 128 * 32))
    assert 7.5 < fwd + bwd <= 8.0
    assert 6 * 7e9 * 2e12 == pytest.approx(8.4e22)


@pytest.mark.verifies("scale-6nd-flops")
def test_flops_of_a_7b_model_on_2t_tokens():
    fwd, bwd = _per_param_token(inputs_require_grad=True)
    flops = (fwd + bwd) * 7e9 * 2e12
    assert accepts(TOPIC, "scale-6nd-flops", f"{flops:.1e}")
    assert accepts(TOPIC, "scale-6nd-flops", "8.4e22")
    for slip in ("2.8e22", "5.6e22", "8.4e21", "1.4e22"):  # 2ND, 4ND, a lost power of ten, ND
        assert not accepts(TOPIC, "scale-6nd-flops", slip)
    seconds = flops / (1024 * 4e14)
    assert seconds / 3600 == pytest.approx(57, abs=0.5) and seconds / 86400 == pytest.approx(2.4, abs=0.05)


@pytest.mark.verifies("scale-chinchilla-budget")
def test_compute_optimal_size_for_a_budget():
    budget = torch.tensor(1e24, dtype=torch.float64)

    def flops(n):  # C = 6·N·D with D = 20·N
        return 6 * n * (20 * n)

    lo, hi = torch.tensor(1.0, dtype=torch.float64), torch.tensor(1e13, dtype=torch.float64)
    for _ in range(200):  # bisection, independent of the closed form
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if flops(mid) < budget else (lo, mid)
    n = lo.item()
    assert n == pytest.approx(math.sqrt(1e24 / 120), rel=1e-9)
    assert accepts(TOPIC, "scale-chinchilla-budget", f"{n / 1e9:.1f}")
    assert 20 * n / 1e12 == pytest.approx(1.83, abs=0.01)
    for slip in ("223.6", "158.1", "1825.7", "9.1", "408.2"):  # no 6, C = 2ND, D for N, units, sqrt(C/6)
        assert not accepts(TOPIC, "scale-chinchilla-budget", slip)
    # Chinchilla's own budget lands near its 70 B model
    assert math.sqrt(5.76e23 / 120) / 1e9 == pytest.approx(69.3, abs=0.1)


def _adam_first_step(n: int, lr: float, c_scale: float = 1.0, seed: int = 0):
    """One Adam step on y = W x (W: 8 x n, x entries ±1, loss c·y). Returns the update, x and W0."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, 2, (n,), generator=g, dtype=torch.float64) * 2 - 1
    c = torch.randn(8, generator=g, dtype=torch.float64) * c_scale
    w = nn.Parameter(torch.randn(8, n, generator=g, dtype=torch.float64) / math.sqrt(n))
    w0 = w.detach().clone()
    opt = torch.optim.Adam([w], lr=lr, eps=1e-30)
    (c * (w @ x)).sum().backward()
    opt.step()
    return w.detach() - w0, x, c


def _sgd_first_step(n: int, lr: float, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, 2, (n,), generator=g, dtype=torch.float64) * 2 - 1
    c = torch.randn(8, generator=g, dtype=torch.float64)
    w = nn.Parameter(torch.randn(8, n, generator=g, dtype=torch.float64) / math.sqrt(n))
    w0 = w.detach().clone()
    opt = torch.optim.SGD([w], lr=lr)
    (c * (w @ x)).sum().backward()
    opt.step()
    return w.detach() - w0, x, c


@pytest.mark.verifies("scale-mup-lr-value")
def test_mup_hidden_lr_keeps_the_update_effect():
    base_lr, base_width, width = 0.01, 256, 4096
    lr = base_lr * base_width / width
    assert accepts(TOPIC, "scale-mup-lr-value", f"{lr}") and accepts(TOPIC, "scale-mup-lr-value", "6.25e-4")
    for slip in ("0.0025", "0.01", "0.16", "0.04"):  # square root, unchanged, times 16, times 4
        assert not accepts(TOPIC, "scale-mup-lr-value", slip)
    d_small, x_small, _ = _adam_first_step(base_width, base_lr)
    d_large, x_large, _ = _adam_first_step(width, lr)
    effect_small = (d_small @ x_small).abs()
    effect_large = (d_large @ x_large).abs()
    assert torch.allclose(effect_small, effect_large, rtol=1e-9)
    # the global lr unchanged would make the effect 16 times larger
    d_same, _, _ = _adam_first_step(width, base_lr)
    assert torch.allclose((d_same @ x_large).abs(), 16 * effect_small, rtol=1e-9)


@pytest.mark.verifies("scale-update-size-toy")
def test_update_size_against_width_and_gradient_scale():
    lr = 1e-3
    # choice 0: true, every weight moves by exactly lr, whatever the scale of c
    for scale in (1e-3, 1.0, 1e3):
        delta, _, _ = _adam_first_step(512, lr, c_scale=scale)
        assert torch.allclose(delta.abs(), torch.full_like(delta, lr), rtol=1e-9)
    # choice 1: true, 4 times the width, 4 times the change on the same x
    d1, x1, _ = _adam_first_step(256, lr)
    d4, x4, _ = _adam_first_step(1024, lr)
    assert torch.allclose((d4 @ x4).abs(), 4 * (d1 @ x1).abs(), rtol=1e-9)
    # choice 4: true, lr / n keeps the change fixed
    e1 = (lambda d, x: (d @ x).abs())(*_adam_first_step(256, lr / 256)[:2])
    e4 = (lambda d, x: (d @ x).abs())(*_adam_first_step(1024, lr / 1024)[:2])
    assert torch.allclose(e1, e4, rtol=1e-9)
    # choice 2: false, SGD's change on x grows like n too (Δy = -lr·c·n)
    s1, sx1, c1 = _sgd_first_step(256, lr)
    s4, sx4, c4 = _sgd_first_step(1024, lr)
    assert torch.allclose(s1 @ sx1, -lr * c1 * 256, rtol=1e-9)
    assert torch.allclose(s4 @ sx4, -lr * c4 * 1024, rtol=1e-9)
    # choice 5: false, 4 times n at half the lr doubles the change
    s4_half, sx4_half, c4_half = _sgd_first_step(1024, lr / 2)
    assert torch.allclose(s4_half @ sx4_half, -lr * c4_half * 512, rtol=1e-9)
    # choice 3: false, on independent inputs the change grows like sqrt(n), not n
    g = torch.Generator().manual_seed(5)

    def independent_effect(n):
        delta, _, _ = _adam_first_step(n, lr, seed=n)
        fresh = torch.randn(4000, n, generator=g, dtype=torch.float64)
        return (fresh @ delta.T).pow(2).mean().sqrt().item()

    ratio = independent_effect(1024) / independent_effect(256)
    assert ratio == pytest.approx(2.0, rel=0.05)  # sqrt(4), not 4
    assert _right("scale-update-size-toy") == {0, 1, 4}


@pytest.mark.verifies("scale-critical-batch-steps")
def test_steps_and_examples_from_the_critical_batch_size():
    b_crit, s_min = 2048.0, 1.0
    e_min = b_crit * s_min

    def steps(batch: float) -> float:
        """Solve (S/S_min - 1)(B·S/E_min - 1) = 1 for S > S_min by bisection."""
        lo = torch.tensor(s_min * (1 + 1e-12), dtype=torch.float64)
        hi = torch.tensor(1e9, dtype=torch.float64)
        for _ in range(300):
            mid = (lo + hi) / 2
            value = (mid / s_min - 1) * (batch * mid / e_min - 1) - 1
            lo, hi = (mid, hi) if value < 0 else (lo, mid)
        return lo.item()

    s_small, s_large = steps(512), steps(8192)
    assert s_small == pytest.approx(5.0, rel=1e-9) and s_large == pytest.approx(1.25, rel=1e-9)
    factor = s_small / s_large
    assert accepts(TOPIC, "scale-critical-batch-steps", f"{factor:.0f}")
    for slip in ("16", "2", "5", "1.25", "0.25"):
        assert not accepts(TOPIC, "scale-critical-batch-steps", slip)
    # examples grow 4 times; at B = B_crit both are twice their minimum
    assert 8192 * s_large / (512 * s_small) == pytest.approx(4.0, rel=1e-9)
    assert steps(b_crit) == pytest.approx(2 * s_min, rel=1e-9)


@pytest.mark.verifies("scale-noise-scale-half")
def test_optimal_lr_and_progress_halve_at_the_noise_scale():
    g = torch.Generator().manual_seed(0)
    d, m = 5, 60
    a = torch.randn(d, d, generator=g, dtype=torch.float64)
    h = a @ a.T + 0.5 * torch.eye(d, dtype=torch.float64)  # the Hessian
    noise = torch.randn(m, d, generator=g, dtype=torch.float64)
    noise -= noise.mean(0)  # per-example gradients are G + noise_i exactly
    sigma = noise.T @ noise / m
    grad = torch.randn(d, generator=g, dtype=torch.float64)
    b_noise_target = 8
    grad *= torch.sqrt(torch.trace(h @ sigma) / (b_noise_target * grad @ h @ grad))
    b_noise = (torch.trace(h @ sigma) / (grad @ h @ grad)).item()
    assert b_noise == pytest.approx(8.0, rel=1e-12)

    # sampled batches of B = B_noise examples, with replacement
    idx = torch.randint(0, m, (200_000, b_noise_target), generator=g)
    batch_grads = grad + noise[idx].mean(1)
    quad = torch.einsum("bi,ij,bj->b", batch_grads, h, batch_grads).mean()
    lin = (batch_grads @ grad).mean()

    def best(linear, quadratic):
        """Optimal lr and loss decrease of E[ΔL] = -ε·linear + ε²/2·quadratic, on a fine grid."""
        eps = torch.linspace(0, 2 * linear / quadratic, 20001, dtype=torch.float64)
        decrease = eps * linear - eps**2 / 2 * quadratic
        i = int(decrease.argmax())
        return eps[i].item(), decrease[i].item()

    lr_noisy, dl_noisy = best(lin, quad)
    lr_exact, dl_exact = best(grad @ grad, grad @ h @ grad)
    lr_ratio, dl_ratio = lr_noisy / lr_exact, dl_noisy / dl_exact
    assert lr_ratio == pytest.approx(0.5, abs=0.01)  # choice 0: true
    assert dl_ratio == pytest.approx(0.5, abs=0.01)  # choice 0: true
    assert abs(dl_ratio - 0.25) > 0.2  # choice 1: false, not a quarter
    assert abs(lr_ratio - 1.0) > 0.4  # choice 2: false, not equal to the exact-gradient values
    assert abs(lr_ratio - 1 / math.sqrt(2)) > 0.15  # choice 3: false, not 1/√2
    assert _right("scale-noise-scale-half") == {0}


@pytest.mark.verifies("scale-warmup-big-step")
def test_one_big_step_against_k_small_ones_on_a_quadratic():
    def after_sgd(lr: float, steps: int, h: float = 1.0) -> float:
        w = nn.Parameter(torch.ones(1, dtype=torch.float64))
        opt = torch.optim.SGD([w], lr=lr)
        for _ in range(steps):
            opt.zero_grad()
            (0.5 * h * w.pow(2)).sum().backward()
            opt.step()
        return w.item()  # the error factor, starting from 1

    k = 32
    small, big = after_sgd(0.1, k), after_sgd(0.1 * k, 1)
    assert small == pytest.approx(0.0343, abs=1e-4) and big == pytest.approx(-2.2)  # choice 1: true
    assert abs(big) > 1 > abs(small)  # choice 0: false, the big step is the unstable one
    # choice 2: false, both stable (k·η·h = 1.6 < 2) yet far apart
    small, big = after_sgd(0.05, k), after_sgd(0.05 * k, 1)
    assert abs(big) < 1 and abs(small) < 1
    assert small == pytest.approx(0.194, abs=1e-3) and big == pytest.approx(-0.6)
    # choice 3: false, at low curvature the two agree
    small, big = after_sgd(0.001, k), after_sgd(0.001 * k, 1)
    assert small == pytest.approx(0.9685, abs=1e-4) and big == pytest.approx(0.968)
    assert _right("scale-warmup-big-step") == {1}
