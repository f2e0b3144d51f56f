"""Facts taught by questions/training-stability.yaml: init scales, residual growth, z-loss,
soft-capping, QK-norm and gradient clipping, checked with torch on small tensors.

Single and multi questions: every choice is settled (`# choice N`, N its index in the file), then
the file's key must be exactly the set found true. Numeric questions compute their value and check
that the file's tolerance takes it rounded as the prompt asks and rejects the usual slips.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from bankkeys import accepts, right_choices
from torch import nn
from torch.nn import init

TOPIC = "training-stability"


def _right(qid: str) -> set[int]:
    return right_choices(TOPIC, qid)


def _takes(qid: str, value: float, places: int) -> bool:
    """Whether the file's key and tolerance accept value written with `places` decimals."""
    return accepts(TOPIC, qid, f"{value:.{places}f}")


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _rms(x: torch.Tensor) -> float:
    return x.pow(2).mean().sqrt().item()


@pytest.mark.verifies("stab-kaiming-std")
def test_kaiming_normal_std_for_relu():
    layer = nn.Linear(256, 1024)
    fan_in, fan_out = init._calculate_fan_in_and_fan_out(layer.weight)
    assert (fan_in, fan_out) == (256, 1024)
    std = init.calculate_gain("relu") / math.sqrt(fan_in)
    assert _takes("stab-kaiming-std", std, 4) and _takes("stab-kaiming-std", std, 6)
    assert not _takes("stab-kaiming-std", 1 / math.sqrt(fan_in), 4)  # the ReLU gain forgotten
    assert not _takes("stab-kaiming-std", math.sqrt(2 / fan_out), 4)  # fan_out read as fan_in
    torch.manual_seed(0)
    init.kaiming_normal_(layer.weight, nonlinearity="relu")
    assert layer.weight.std().item() == pytest.approx(std, rel=0.01)


@pytest.mark.verifies("stab-xavier-bound")
def test_xavier_uniform_bound():
    w = torch.empty(512, 2048)
    fan_in, fan_out = init._calculate_fan_in_and_fan_out(w)
    bound = math.sqrt(6 / (fan_in + fan_out))
    assert _takes("stab-xavier-bound", bound, 4) and _takes("stab-xavier-bound", bound, 6)
    assert not _takes("stab-xavier-bound", math.sqrt(2 / (fan_in + fan_out)), 4)  # the std, not the bound
    assert not _takes("stab-xavier-bound", math.sqrt(6 / fan_in), 4)  # fan_in alone
    torch.manual_seed(0)
    init.xavier_uniform_(w)
    assert w.abs().max().item() <= bound
    assert w.abs().max().item() == pytest.approx(bound, rel=1e-3)  # a million draws reach the edge


@pytest.mark.verifies("stab-linear-default-init")
def test_linear_default_init_is_uniform_one_over_sqrt_fan_in():
    torch.manual_seed(0)
    fan_in, fan_out = 400, 1000
    w = nn.Linear(fan_in, fan_out).weight
    bound = 1 / math.sqrt(fan_in)
    assert w.abs().max().item() <= bound and w.abs().max().item() == pytest.approx(bound, rel=1e-3)  # choice 2
    assert w.std().item() == pytest.approx(1 / math.sqrt(3 * fan_in), rel=0.01)  # choice 2
    assert w.std().item() == pytest.approx(math.sqrt(2 / fan_in) / math.sqrt(6), rel=0.01)  # choice 0: √6 smaller
    assert w.abs().max().item() < math.sqrt(6 / (fan_in + fan_out)) * 0.9  # choice 1: not Xavier's bound
    narrow = nn.Linear(16, 1000).weight
    assert narrow.std().item() > 3 * w.std().item()  # choice 3: the scale depends on the width, not 0.02
    assert abs(w.std().item() - 0.02) > 0.005
    assert _right("stab-linear-default-init") == {2}


def _relu_stack_rms_ratios(*weight_var_times_fan_in: float, width: int = 512) -> list[float]:
    """Input RMS / output RMS of a 20-layer ReLU MLP (width 512 by default), for each weight variance · fan_in."""
    g = _gen(0)
    x = torch.randn(128, width, generator=g)
    weights = [torch.randn(width, width, generator=g) for _ in range(20)]  # unit normal, scaled below
    ratios = []
    for scale in weight_var_times_fan_in:
        h = x
        for w in weights:
            h = torch.relu(h @ (w * math.sqrt(scale / width)).T)
        ratios.append(_rms(x) / _rms(h))
    return ratios


@pytest.mark.verifies("stab-relu-shrink")
def test_relu_stack_with_variance_one_over_fan_in_fades_by_about_2_to_the_10():
    ratio, kaiming = _relu_stack_rms_ratios(1.0, 2.0)
    assert 500 < ratio < 2000  # choice 0: about 2^10 = 1024 smaller
    assert ratio > 10  # choices 1 and 2: neither the same scale nor larger
    assert ratio < 1e5  # choice 3: nowhere near 2^20
    assert 0.5 < kaiming < 2  # Kaiming's 2 / fan_in keeps the scale
    (other_width,) = _relu_stack_rms_ratios(1.0, width=128)
    assert 500 < other_width < 2000  # the width does not enter the ratio
    assert _right("stab-relu-shrink") == {0}


@pytest.mark.verifies("stab-residual-growth")
def test_pre_norm_residual_stream_grows_like_sqrt_of_depth():
    d = 128
    g = _gen(1)
    x = torch.randn(256, d, generator=g)
    for depth in (4, 16, 64):
        h = x.clone()
        for _ in range(depth):
            w = torch.randn(d, d, generator=g) / math.sqrt(d)
            h = h + F.layer_norm(h, (d,)) @ w.T
        std = h.std().item()
        assert std == pytest.approx(math.sqrt(depth + 1), rel=0.1)  # choice 3
        assert std > 1.5  # choice 0: not brought back to 1
    assert std < 0.25 * depth  # choices 1 and 2: at depth 64, far below linear or exponential growth
    # the why-not of choice 2: without the norm, x + f(x) doubles the variance per block
    h = x.clone()
    for _ in range(8):
        h = h + h @ (torch.randn(d, d, generator=g) / math.sqrt(d)).T
    assert h.std().item() == pytest.approx(2 ** (8 / 2), rel=0.2)
    assert _right("stab-residual-growth") == {3}


@pytest.mark.verifies("stab-gpt2-residual-scale")
def test_residual_projection_std_and_why_it_keeps_the_added_variance():
    n_layer = 24
    std = 0.02 / math.sqrt(2 * n_layer)
    assert _takes("stab-gpt2-residual-scale", std, 5) and _takes("stab-gpt2-residual-scale", std, 7)
    assert not _takes("stab-gpt2-residual-scale", 0.02 / math.sqrt(n_layer), 5)  # N branches, not 2N
    assert not _takes("stab-gpt2-residual-scale", 0.02 / (2 * n_layer), 5)  # divided by 2N, not its root
    # 2N independent branch outputs of that std add up to the variance of one branch at 0.02
    g = _gen(2)
    total = sum(torch.randn(20_000, generator=g) * std for _ in range(2 * n_layer))
    assert total.std().item() == pytest.approx(0.02, rel=0.02)


@pytest.mark.verifies("stab-zero-init-branch")
def test_zero_initialised_output_layer_gets_a_gradient_and_blocks_the_first_one():
    torch.manual_seed(0)
    w1, w2 = nn.Linear(8, 16), nn.Linear(16, 8)
    nn.init.zeros_(w2.weight)
    nn.init.zeros_(w2.bias)
    x = torch.randn(4, 8)
    y = x + w2(torch.relu(w1(x)))
    assert torch.equal(y, x)  # the block starts as the identity
    (y - torch.randn(4, 8)).pow(2).sum().backward()
    assert w2.weight.grad.abs().max().item() > 0  # choice 1; choices 0 and 3 are false
    assert torch.count_nonzero(w1.weight.grad).item() == 0  # choice 1; choice 2 is false
    assert torch.count_nonzero(w1.bias.grad).item() == 0
    assert _right("stab-zero-init-branch") == {1}


@pytest.mark.verifies("stab-zloss-value")
def test_z_loss_value_and_gradient():
    logits = torch.tensor([25.0, 0.0, -3.0, 1.0])
    logits = logits - torch.logsumexp(logits, 0) + 25.0  # shift so that logsumexp is exactly 25
    logits.requires_grad_(True)
    log_z = torch.logsumexp(logits, 0)
    assert log_z.item() == pytest.approx(25.0, abs=1e-5)
    z_loss = 1e-4 * log_z**2
    exact = 1e-4 * 25.0**2
    assert z_loss.item() == pytest.approx(exact, rel=1e-5)
    assert _takes("stab-zloss-value", exact, 4) and _takes("stab-zloss-value", exact, 6)
    assert not _takes("stab-zloss-value", 1e-4 * 25.0, 4)  # log Z not squared
    z_loss.backward()
    assert torch.allclose(logits.grad, 2 * 1e-4 * 25.0 * torch.softmax(logits.detach(), 0), atol=1e-7)


@pytest.mark.verifies("stab-zloss-why")
def test_cross_entropy_ignores_a_shift_that_z_loss_sees():
    logits = torch.randn(3, 10, generator=_gen(3))
    target = torch.tensor([1, 4, 7])
    for shift in (50.0, -50.0):
        assert F.cross_entropy(logits + shift, target).item() == pytest.approx(F.cross_entropy(logits, target).item(), abs=1e-4)
    z = lambda t: (torch.logsumexp(t, -1) ** 2).mean()  # noqa: E731
    assert z(logits + 50.0) > 100 * z(logits)  # choice 3: only z-loss sees the drift
    # a step on z-loss alone moves log Z towards 0
    drifted = (logits + 20.0).requires_grad_(True)
    z(drifted).backward()
    stepped = drifted.detach() - 1.0 * drifted.grad
    assert torch.logsumexp(stepped, -1).abs().max() < torch.logsumexp(drifted.detach(), -1).abs().min()
    # choice 0: a confident (low-entropy) prediction can have z-loss 0
    confident = torch.log(torch.tensor([0.999] + [0.001 / 9] * 9))
    assert torch.logsumexp(confident, 0).item() == pytest.approx(0.0, abs=1e-6)
    # choice 1: it depends on the logits, not on the head's weight norm: a tiny head on large hidden states
    head = nn.Linear(16, 10, bias=False)
    nn.init.normal_(head.weight, std=1e-3)
    hidden = torch.randn(2, 16, generator=_gen(4)) * 1e5
    assert torch.logsumexp(head(hidden), -1).abs().max().item() > 50
    # choice 2: changing a wrong class's logit changes it too, and nothing is capped
    bumped = logits.clone()
    bumped[0, 0] += 30.0
    assert z(bumped) != pytest.approx(z(logits).item())
    assert _right("stab-zloss-why") == {3}


@pytest.mark.verifies("stab-softcap-value")
def test_soft_cap_of_a_logit_of_60():
    cap = 30.0
    capped = cap * torch.tanh(torch.tensor(60.0) / cap)
    assert _takes("stab-softcap-value", capped.item(), 2) and _takes("stab-softcap-value", capped.item(), 4)
    assert not _takes("stab-softcap-value", cap, 2)  # a hard clamp at the cap
    assert (cap * torch.tanh(torch.tensor(3.0) / cap)).item() == pytest.approx(2.99, abs=0.005)


@pytest.mark.verifies("stab-softcap-grad")
def test_soft_cap_gradient_is_small_but_not_zero():
    z = torch.tensor([60.0, 30.0], requires_grad=True)
    (30 * torch.tanh(z / 30)).sum().backward()
    at_60, at_30 = z.grad.tolist()
    assert at_60 == pytest.approx(1 - math.tanh(2) ** 2, rel=1e-5) and at_60 == pytest.approx(0.07, abs=0.005)  # choice 0
    assert at_60 < 1  # choice 1: no straight-through
    assert at_60 > 0  # choice 2: not cut off
    clamped = torch.tensor(60.0, requires_grad=True)
    torch.clamp(clamped, max=30.0).backward()
    assert clamped.grad.item() == 0.0  # the clamp of choice 2 does cut it off
    assert at_30 == pytest.approx(0.42, abs=0.005) and at_60 < at_30  # choice 3: 0.42 at the cap only
    assert _right("stab-softcap-grad") == {0}


def _attention_logits(x, wq, wk, qk_norm: bool) -> torch.Tensor:
    q, k = x @ wq.T, x @ wk.T
    if qk_norm:
        q, k = F.rms_norm(q, (q.shape[-1],)), F.rms_norm(k, (k.shape[-1],))
    return q @ k.T / math.sqrt(q.shape[-1])


@pytest.mark.verifies("stab-qk-norm")
def test_qk_norm_bounds_the_logits_whatever_the_weights():
    d = 32
    g = _gen(5)
    x = torch.randn(10, d, generator=g)
    wq, wk = torch.randn(d, d, generator=g) / math.sqrt(d), torch.randn(d, d, generator=g) / math.sqrt(d)
    plain, plain_big = _attention_logits(x, wq, wk, False), _attention_logits(x, 10 * wq, 10 * wk, False)
    normed, normed_big = _attention_logits(x, wq, wk, True), _attention_logits(x, 10 * wq, 10 * wk, True)
    assert torch.allclose(plain_big, 100 * plain, rtol=1e-4, atol=1e-4)  # logits grow with the weights' product
    assert torch.allclose(normed_big, normed, atol=1e-3)  # choice 1: QK-norm removes that growth
    assert normed.abs().max().item() <= math.sqrt(d) + 1e-4  # |q̂·k̂| / √d ≤ √d with unit gain
    # only the norms' learned gains can still scale them: gains of 3 on q and k give 9 times the logits
    q_hat = F.rms_norm(x @ wq.T, (d,), weight=torch.full((d,), 3.0))
    k_hat = F.rms_norm(x @ wk.T, (d,), weight=torch.full((d,), 3.0))
    assert torch.allclose(q_hat @ k_hat.T / math.sqrt(d), 9 * normed, atol=1e-3)
    # choice 0: the 1/√d scale is already the default of scaled_dot_product_attention
    q, k, v = (torch.randn(1, 1, 6, d, generator=g) for _ in range(3))
    manual = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d), -1) @ v
    assert torch.allclose(F.scaled_dot_product_attention(q, k, v), manual, atol=1e-5)
    # choice 2: normalising after the weighted sum leaves the collapsed attention weights as they are
    entropy = lambda logits: -(torch.softmax(logits, -1) * torch.log_softmax(logits, -1)).sum(-1).mean()  # noqa: E731
    assert entropy(plain_big) < 0.5 * entropy(plain)
    # choice 3 (rescaling weights after each optimizer step) is a claim about the method, not settled by torch
    assert _right("stab-qk-norm") == {1}


@pytest.mark.verifies("stab-clip-grad-value")
def test_clip_grad_norm_scales_all_gradients_by_one_factor():
    a, b = nn.Parameter(torch.zeros(2)), nn.Parameter(torch.zeros(1))
    a.grad, b.grad = torch.tensor([3.0, 4.0]), torch.tensor([12.0])
    total = nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    assert total.item() == pytest.approx(math.sqrt(3**2 + 4**2 + 12**2))
    assert b.grad.item() == pytest.approx(12 / (13 + 1e-6), rel=1e-6)
    assert _takes("stab-clip-grad-value", b.grad.item(), 3) and _takes("stab-clip-grad-value", b.grad.item(), 5)
    assert not _takes("stab-clip-grad-value", 1.0, 3)  # each tensor clipped on its own


@pytest.mark.verifies("stab-clip-facts")
def test_clip_grad_norm_behaviour():
    a, b = nn.Parameter(torch.zeros(2)), nn.Parameter(torch.zeros(1))
    a.grad, b.grad = torch.tensor([3.0, 4.0]), torch.tensor([12.0])
    total = nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    assert total.item() == pytest.approx(13.0)  # choice 0: the norm before clipping
    assert torch.linalg.vector_norm(torch.cat([a.grad, b.grad])).item() == pytest.approx(1.0, rel=1e-5)
    assert a.grad.norm().item() < 0.5  # choice 1: one shared factor, not per tensor
    small = nn.Parameter(torch.zeros(2))
    small.grad = torch.tensor([0.3, 0.4])
    before = small.grad.clone()
    nn.utils.clip_grad_norm_([small], max_norm=1.0)
    assert torch.equal(small.grad, before)  # choice 2
    bad = nn.Parameter(torch.zeros(2))
    bad.grad = torch.tensor([float("inf"), 1.0])
    returned = nn.utils.clip_grad_norm_([bad], max_norm=1.0)  # choice 3: no error by default
    assert math.isinf(returned.item()) and math.isnan(bad.grad[0].item()) and bad.grad[1].item() == 0.0
    with pytest.raises(RuntimeError):
        bad.grad = torch.tensor([float("inf"), 1.0])
        nn.utils.clip_grad_norm_([bad], max_norm=1.0, error_if_nonfinite=True)
    # choice 4: clipping the scaled gradient compares max_norm with norm · scale
    scaled = nn.Parameter(torch.zeros(2))
    scaled.grad = torch.tensor([0.3, 0.4]) * 65536.0
    assert nn.utils.clip_grad_norm_([scaled], max_norm=1.0).item() == pytest.approx(0.5 * 65536.0)
    assert _right("stab-clip-facts") == {0, 2}


@pytest.mark.verifies("stab-spike-card")
def test_what_overflows_in_float16_and_what_bfloat16_loses():
    assert torch.tensor(66000.0, dtype=torch.float16).item() == math.inf  # float16 overflows above 65504
    assert torch.finfo(torch.float16).max == 65504
    bf16 = torch.finfo(torch.bfloat16)
    assert bf16.max == pytest.approx(torch.finfo(torch.float32).max, rel=0.01)  # float32's range...
    assert torch.tensor(66000.0, dtype=torch.bfloat16).item() < math.inf
    assert bf16.eps == 2**-7  # ...with 8 bits of precision: 256 + 1 rounds back to 256
    assert torch.tensor(257.0, dtype=torch.bfloat16).item() == 256.0
    # a long sum in bf16 stalls: adding 1 to 256 changes nothing
    total = torch.tensor(0.0, dtype=torch.bfloat16)
    for _ in range(1000):
        total = total + torch.tensor(1.0, dtype=torch.bfloat16)
    assert total.item() == 256.0
    # clip_grad_norm_ returns the total norm before clipping: the number to log every step
    p = nn.Parameter(torch.zeros(2))
    p.grad = torch.tensor([30.0, 40.0])
    assert torch.nn.utils.clip_grad_norm_([p], max_norm=1.0).item() == pytest.approx(50.0)


@pytest.mark.verifies("stab-attn-logit-growth")
def test_logits_grow_with_the_square_of_the_weight_scale_and_the_softmax_collapses():
    d = 32
    g = _gen(7)
    x = torch.randn(10, d, generator=g)
    wq, wk = torch.randn(d, d, generator=g) / math.sqrt(d), torch.randn(d, d, generator=g) / math.sqrt(d)

    def entropy(logits):
        return -(torch.softmax(logits, -1) * torch.log_softmax(logits, -1)).sum(-1).mean().item()

    def softmax_jacobian_norm(row):
        p = torch.softmax(row, -1)
        return (torch.diag(p) - torch.outer(p, p)).norm().item()

    base = _attention_logits(x, wq, wk, False)
    scaled = {c: _attention_logits(x, c * wq, c * wk, False) for c in (1, 3, 10)}
    assert torch.allclose(scaled[3], 9 * base, rtol=1e-4, atol=1e-4)  # quadratic in the weights' scale
    entropies = [entropy(scaled[c]) for c in (1, 3, 10)]
    assert entropies[0] > entropies[1] > entropies[2] and entropies[2] < 0.2  # near one-hot
    jac = [softmax_jacobian_norm(scaled[c][0]) for c in (1, 3, 10)]
    assert jac[0] > 5 * jac[2]  # the softmax's gradient vanishes
    # fixes: QK-norm makes the logits independent of the scale; soft-capping bounds them
    assert torch.allclose(_attention_logits(x, 10 * wq, 10 * wk, True), _attention_logits(x, wq, wk, True), atol=1e-3)
    cap = 50.0
    capped = cap * torch.tanh(scaled[10] * 100 / cap)
    assert capped.abs().max().item() <= cap
