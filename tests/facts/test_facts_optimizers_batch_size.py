"""Facts taught by questions/optimizers-batch-size.yaml, checked by running torch's optimizers.

Each single or multi question's test settles every choice (`# choice N` beside the assertion, N
its index in the file) and then checks that the file's key is exactly the set found true.
Numeric answers are computed here and compared with the file's key. The cards' tests check the
update rules, state buffers and byte counts with torch; the batch-size findings (Goyal et al. 2017,
Hoffer et al. 2017, Shallue et al. 2018, McCandlish et al. 2018, Malladi et al. 2022) rest on the
papers.
"""


import math

import pytest
import torch
from bankkeys import right_choices, topic_questions

TOPIC = "optimizers-batch-size"



def _one_step(optimizer_cls, value, grad, **kwargs):
    """Value of a single scalar parameter after one step of `optimizer_cls` with gradient `grad`."""
    param = torch.nn.Parameter(torch.tensor([value], dtype=torch.float64))
    optimizer = optimizer_cls([param], **kwargs)
    param.grad = torch.tensor([grad], dtype=torch.float64)
    optimizer.step()
    return param.item()


@pytest.mark.verifies("opt-sgd-momentum-steady-state")
def test_sgd_momentum_steady_state_step_is_lr_over_one_minus_mu():
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([param], lr=0.1, momentum=0.9)
    steps = []
    for _ in range(300):
        before = param.item()
        param.grad = torch.ones(1)
        optimizer.step()
        steps.append(before - param.item())
    assert steps[0] == pytest.approx(0.1)  # torch's buffer starts at the first gradient
    assert steps[-1] == pytest.approx(0.1 / (1 - 0.9), rel=1e-4)
    assert steps[-1] == pytest.approx(topic_questions(TOPIC)["opt-sgd-momentum-steady-state"].answer, rel=1e-3)


@pytest.mark.verifies("opt-adam-bias-correction")
def test_adam_second_step_with_zero_gradient():
    lr = 0.01
    param = torch.nn.Parameter(torch.tensor([1.0]))
    optimizer = torch.optim.Adam([param], lr=lr)
    moves = []
    for grad in (1.0, 0.0):
        before = param.item()
        param.grad = torch.tensor([grad])
        optimizer.step()
        moves.append((before - param.item()) / lr)
    assert moves[0] == pytest.approx(1.0, rel=1e-5)  # bias-corrected first step is ~lr
    assert moves[1] == pytest.approx(topic_questions(TOPIC)["opt-adam-bias-correction"].answer, abs=5e-4)
    # the hand computation the question asks for
    m_hat = 0.9 * 0.1 / (1 - 0.9**2)
    v_hat = 0.999 * 0.001 / (1 - 0.999**2)
    assert m_hat / v_hat**0.5 == pytest.approx(moves[1], rel=1e-4)
    # without bias correction the first step would be (1 - b1) / sqrt(1 - b2) = 3.16 times larger
    assert 0.1 / 0.001**0.5 == pytest.approx(3.162, rel=1e-3)
    # the first step is about lr * sign(g) only where the gradient is well above eps
    firsts = [abs(_one_step(torch.optim.Adam, 0.0, g, lr=lr)) / lr for g in (5.0, -1e-3, 1e-8, 0.0)]
    assert firsts[0] == pytest.approx(1.0) and firsts[1] == pytest.approx(1.0, rel=1e-4)
    assert firsts[2] == pytest.approx(0.5) and firsts[3] == 0.0  # near eps: less; exactly 0: no move


@pytest.mark.verifies("opt-adam-eps")
def test_adam_eps_facts():
    lr = 0.01
    tiny = 1.0 - _one_step(torch.optim.Adam, 1.0, 1e-8, lr=lr)
    # choice 1: true. A gradient equal to eps moves by half of lr, a gradient of 1 by lr
    assert tiny == pytest.approx(lr / 2, rel=1e-3)
    assert 1.0 - _one_step(torch.optim.Adam, 1.0, 1.0, lr=lr) == pytest.approx(lr, rel=1e-6)
    # choice 0: false. Inside the root the 1e-8 gradient would move by g / sqrt(g^2 + eps) ~ 1e-4 lr
    inside_root = lr * 1e-8 / (1e-16 + 1e-8) ** 0.5
    assert inside_root == pytest.approx(1e-4 * lr, rel=1e-3)
    assert tiny != pytest.approx(inside_root, rel=0.5)
    # choice 3: false. The default eps cannot be stored in float16
    assert torch.tensor(1e-8, dtype=torch.float16).item() == 0.0
    # choice 2: false. eps much larger than sqrt(v_hat): the step is about lr * m_hat / eps, not lr * sign
    big_eps = 1e3
    move = 1.0 - _one_step(torch.optim.Adam, 1.0, 2.0, lr=lr, eps=big_eps)
    assert move == pytest.approx(lr * 2.0 / (2.0 + big_eps), rel=1e-5)
    assert move == pytest.approx(lr * 2.0 / big_eps, rel=5e-3)
    assert move != pytest.approx(lr, rel=0.5)
    # choice 4: false. A larger eps shrinks the step
    for grad in (1e-6, 1e-3, 1.0):
        small_eps = 1.0 - _one_step(torch.optim.Adam, 1.0, grad, lr=lr, eps=1e-8)
        large_eps = 1.0 - _one_step(torch.optim.Adam, 1.0, grad, lr=lr, eps=1e-3)
        assert large_eps < small_eps
    assert right_choices(TOPIC, "opt-adam-eps") == {1}


@pytest.mark.verifies("opt-adamw-vs-l2", "opt-adamw-name")
def test_coupled_l2_vs_decoupled_weight_decay():
    lr, wd, w = 0.01, 1e-4, 2.0
    # Adam's weight_decay adds wd * w to the gradient; Adam then normalises it to a full lr step
    assert w - _one_step(torch.optim.Adam, w, 0.0, lr=lr, weight_decay=wd) == pytest.approx(
        lr, rel=1e-3
    )
    # AdamW shrinks the weight by lr * wd * w, independently of the gradient statistics
    assert _one_step(torch.optim.AdamW, w, 0.0, lr=lr, weight_decay=wd) == pytest.approx(
        w * (1 - lr * wd), rel=1e-7
    )
    assert _one_step(
        torch.optim.Adam, w, 0.0, lr=lr, weight_decay=wd, decoupled_weight_decay=True
    ) == pytest.approx(w * (1 - lr * wd), rel=1e-7)
    # AdamW's default weight decay is 0.01, Adam's is 0
    assert torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))]).defaults["weight_decay"] == 0.01
    assert torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))]).defaults["weight_decay"] == 0


@pytest.mark.verifies("opt-adamw-memory-fp32")
def test_adamw_fp32_bytes_per_parameter():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))
    optimizer = torch.optim.AdamW(model.parameters())
    with torch.autocast("cpu", dtype=torch.bfloat16):  # autocast keeps params and grads float32
        loss = model(torch.randn(4, 64)).float().pow(2).mean()
    loss.backward()
    optimizer.step()
    params = list(model.parameters())
    n = sum(p.numel() for p in params)
    weight_bytes = sum(p.numel() * p.element_size() for p in params)
    grad_bytes = sum(p.grad.numel() * p.grad.element_size() for p in params)
    state_bytes = sum(
        t.numel() * t.element_size()
        for state in optimizer.state.values()
        for key, t in state.items()
        if key != "step"  # one scalar per tensor, not per element
    )
    assert sorted(optimizer.state[params[0]]) == ["exp_avg", "exp_avg_sq", "step"]
    assert (weight_bytes + grad_bytes + state_bytes) / n == topic_questions(TOPIC)["opt-adamw-memory-fp32"].answer


@pytest.mark.verifies("opt-no-decay-params")
def test_dim_rule_puts_biases_and_norms_in_the_no_decay_group():
    layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32)
    no_decay = {name for name, p in layer.named_parameters() if p.ndim < 2}
    decay = {name for name, p in layer.named_parameters() if p.ndim >= 2}
    assert no_decay == {
        "self_attn.in_proj_bias",
        "self_attn.out_proj.bias",
        "linear1.bias",
        "linear2.bias",
        "norm1.weight",
        "norm1.bias",
        "norm2.weight",
        "norm2.bias",
    }
    assert decay == {
        "self_attn.in_proj_weight",
        "self_attn.out_proj.weight",
        "linear1.weight",
        "linear2.weight",
    }
    # a group with weight_decay=0 leaves a zero-gradient LayerNorm gain at 1 under AdamW
    optimizer = torch.optim.AdamW(
        [
            {"params": [p for n, p in layer.named_parameters() if n in decay], "weight_decay": 0.1},
            {"params": [p for n, p in layer.named_parameters() if n in no_decay], "weight_decay": 0.0},
        ],
        lr=0.1,
    )
    for p in layer.parameters():
        p.grad = torch.zeros_like(p)
    before = layer.linear1.weight.detach().clone()
    optimizer.step()
    assert torch.equal(layer.norm1.weight, torch.ones(16))
    assert torch.allclose(layer.linear1.weight, before * (1 - 0.1 * 0.1))

    assert "linear1.weight" in decay and "self_attn.in_proj_weight" in decay  # choice 0: false
    assert {"linear1.bias", "linear2.bias", "self_attn.out_proj.bias"} <= no_decay  # choice 1: true
    assert {"norm1.weight", "norm2.weight"} <= no_decay  # choice 2: true
    assert {"norm1.bias", "norm2.bias"} <= no_decay  # choice 3: true
    # choice 4: false. In a decayed group AdamW pulls a zero-gradient LayerNorm gain below 1
    gain = torch.nn.Parameter(torch.ones(16))
    decayed = torch.optim.AdamW([gain], lr=0.1, weight_decay=0.1)
    gain.grad = torch.zeros(16)
    decayed.step()
    assert torch.all(gain < 1.0)
    assert right_choices(TOPIC, "opt-no-decay-params") == {1, 2, 3}


# --- the cards ---


def _state_shapes(optimizer_cls, shape=(4, 3), **kwargs):
    param = torch.nn.Parameter(torch.randn(shape))
    optimizer = optimizer_cls([param], **kwargs)
    param.grad = torch.randn(shape)
    optimizer.step()
    return {k: tuple(v.shape) for k, v in optimizer.state[param].items() if k != "step"}


@pytest.mark.verifies("opt-sgd-vs-adam")
def test_sgd_momentum_form_state_buffers_and_per_coordinate_normalisation():
    # torch's SGD momentum: buf = mu * buf + g; w -= lr * buf
    param = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
    optimizer = torch.optim.SGD([param], lr=0.1, momentum=0.9)
    buf, w = 0.0, 0.0
    for g in (1.0, 2.0, -1.0, 0.5):
        param.grad = torch.tensor([g], dtype=torch.float64)
        optimizer.step()
        buf = 0.9 * buf + g
        w -= 0.1 * buf
        assert param.item() == pytest.approx(w, abs=1e-12)
    # state: one buffer for SGD with momentum, two for Adam/AdamW, one for RMSprop,
    # factored row and column statistics for Adafactor
    assert _state_shapes(torch.optim.SGD, lr=0.1, momentum=0.9) == {"momentum_buffer": (4, 3)}
    assert _state_shapes(torch.optim.Adam) == {"exp_avg": (4, 3), "exp_avg_sq": (4, 3)}
    assert _state_shapes(torch.optim.AdamW) == {"exp_avg": (4, 3), "exp_avg_sq": (4, 3)}
    assert _state_shapes(torch.optim.RMSprop) == {"square_avg": (4, 3)}
    assert _state_shapes(torch.optim.Adafactor) == {"row_var": (4, 1), "col_var": (1, 3)}
    # RMSprop is Adam with no momentum and no bias correction: v = a v + (1 - a) g^2, w -= lr g / (sqrt(v) + eps)
    param = torch.nn.Parameter(torch.tensor([1.0], dtype=torch.float64))
    optimizer = torch.optim.RMSprop([param], lr=1e-3, alpha=0.99, eps=1e-8)
    v, w = 0.0, 1.0
    for g in (0.5, 1.0, 2.0):
        param.grad = torch.tensor([g], dtype=torch.float64)
        optimizer.step()
        v = 0.99 * v + 0.01 * g * g
        w -= 1e-3 * g / (v**0.5 + 1e-8)
        assert param.item() == pytest.approx(w, abs=1e-12)
    adam_no_momentum = 1.0 - _one_step(torch.optim.Adam, 1.0, 0.5, lr=1e-3, betas=(0.0, 0.99))
    assert adam_no_momentum == pytest.approx(1e-3, rel=1e-4)  # bias correction: a step of lr...
    assert 1.0 - _one_step(torch.optim.RMSprop, 1.0, 0.5, lr=1e-3, alpha=0.99) == pytest.approx(1e-2, rel=1e-4)  # ...not 10 lr
    # Adam normalises each coordinate: gradients 1000x apart give the same first step; SGD's differ 1000x
    for cls, kwargs, ratio in ((torch.optim.Adam, {"lr": 1e-3}, 1.0), (torch.optim.SGD, {"lr": 1e-3}, 1000.0)):
        param = torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))
        optimizer = cls([param], **kwargs)
        param.grad = torch.tensor([1.0, 1e-3], dtype=torch.float64)
        optimizer.step()
        assert (param[0] / param[1]).item() == pytest.approx(ratio, rel=1e-4)


@pytest.mark.verifies("opt-adamw-vs-l2")
def test_l2_equals_weight_decay_for_sgd_but_not_for_adam():
    lr, wd, w, g = 0.1, 0.01, 2.0, 0.5
    # plain SGD: the L2 term and decoupled decay give the same step
    assert _one_step(torch.optim.SGD, w, g, lr=lr, weight_decay=wd) == pytest.approx(w * (1 - lr * wd) - lr * g)

    # with momentum the L2 term goes through the buffer: at a constant lr that is roughly decoupled
    # decay with lambda / (1 - momentum), not with lambda itself (SGDW decouples it)
    def momentum_run(decoupled_wd: float, l2: float, steps=300, mu=0.9):
        p = torch.nn.Parameter(torch.tensor([w], dtype=torch.float64))
        opt = torch.optim.SGD([p], lr=lr, momentum=mu, weight_decay=l2)
        for _ in range(steps):
            p.grad = torch.zeros(1, dtype=torch.float64)  # decay alone
            with torch.no_grad():
                p.mul_(1 - lr * decoupled_wd)
            opt.step()
        return p.item()

    def decay_rate(final):  # per-step log shrink
        return math.log(w / final) / 300

    coupled = decay_rate(momentum_run(0.0, wd))
    assert coupled == pytest.approx(decay_rate(momentum_run(wd / (1 - 0.9), 0.0)), rel=0.15)
    assert coupled > 8 * decay_rate(momentum_run(wd, 0.0))  # same lambda: about ten times the decay

    # Adam with L2: a weight with a large gradient barely feels the decay...
    lr, wd = 0.01, 1e-4
    with_l2 = _one_step(torch.optim.Adam, w, 100.0, lr=lr, weight_decay=wd)
    without = _one_step(torch.optim.Adam, w, 100.0, lr=lr)
    assert abs(with_l2 - without) < 1e-9
    # ...while AdamW shrinks it by lr * wd * w whatever its gradient
    decayed = _one_step(torch.optim.AdamW, w, 100.0, lr=lr, weight_decay=wd)
    plain = _one_step(torch.optim.AdamW, w, 100.0, lr=lr, weight_decay=0.0)
    assert plain - decayed == pytest.approx(lr * wd * w, rel=1e-6)
    # a weight with zero loss gradient gets a full lr step from Adam's L2 term: 0.01, not 2e-6
    assert w - _one_step(torch.optim.Adam, w, 0.0, lr=lr, weight_decay=wd) == pytest.approx(0.0099995, rel=1e-6)
    # ...for any lambda with lambda * |w| well above eps; near eps the step shrinks
    assert w - _one_step(torch.optim.Adam, w, 0.0, lr=lr, weight_decay=1.0) == pytest.approx(0.01, rel=1e-6)
    assert w - _one_step(torch.optim.Adam, w, 0.0, lr=lr, weight_decay=5e-9) == pytest.approx(0.005, rel=1e-6)
    assert w - _one_step(torch.optim.AdamW, w, 0.0, lr=lr, weight_decay=wd) == pytest.approx(2e-6, rel=1e-6)


@pytest.mark.verifies("opt-training-memory-7b")
def test_sixteen_bytes_per_parameter():
    assert 7e9 * (2 + 2 + 4 + 4 + 4) == 112e9
    assert 112e9 / 2**30 == pytest.approx(104.3, abs=0.05)  # GiB
    assert 7e9 * 2 / 1e9 == 14  # a bf16 frozen base for LoRA
    # fp32 AdamW with autocast: weights, grads, m and v are all float32, 4 + 4 + 4 + 4
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    optimizer = torch.optim.AdamW(model.parameters())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(torch.randn(8, 32))
    out.float().pow(2).mean().backward()
    optimizer.step()
    params = list(model.parameters())
    n = sum(p.numel() for p in params)
    per_param = sum(p.numel() * p.element_size() + p.grad.numel() * p.grad.element_size() for p in params)
    per_param += sum(t.numel() * t.element_size() for s in optimizer.state.values() for k, t in s.items() if k != "step")
    assert per_param / n == 16
    assert all(p.dtype == p.grad.dtype == torch.float32 for p in params)


@pytest.mark.verifies("opt-lr-batch-scaling")
def test_gradient_noise_and_the_linear_scaling_rule():
    dt = torch.float64
    gen = torch.Generator().manual_seed(0)
    n, d = 4096, 8
    x = torch.randn(n, d, generator=gen, dtype=dt)
    y = x @ torch.randn(d, generator=gen, dtype=dt) + torch.randn(n, generator=gen, dtype=dt)
    w0 = torch.zeros(d, dtype=dt)
    per_example = (x @ w0 - y)[:, None] * x  # gradients of 0.5 * (x w - y)^2, one row per example

    def minibatch_variance(batch):
        idx = torch.randint(0, n, (3000, batch), generator=gen)
        return per_example[idx].mean(1).var(0).sum().item()

    v8, v64 = minibatch_variance(8), minibatch_variance(64)
    assert v8 / v64 == pytest.approx(8.0, rel=0.15)  # the noise variance falls as 1 / B

    # linear rule: one step on k*B with lr*k ~ k steps on B with lr, while the gradient barely changes
    def sgd(w, batches, lr):
        w = w.clone()
        for xb, yb in batches:
            w -= lr * ((xb @ w - yb)[:, None] * xb).mean(0)
        return w

    k, b = 8, 32
    small = [(x[i * b:(i + 1) * b], y[i * b:(i + 1) * b]) for i in range(k)]
    big = [(x[:k * b], y[:k * b])]
    for lr, close in ((1e-3, True), (0.2, False)):
        many, one = sgd(w0, small, lr), sgd(w0, big, lr * k)
        rel = ((many - one).norm() / (many - w0).norm()).item()
        assert (rel < 0.05) == close  # breaks down once the steps change the gradient a lot
    # square-root rule: lr^2 * Sigma / B is unchanged when lr grows by sqrt(k) and B by k
    assert (8**0.5) ** 2 / 8 == pytest.approx(1.0)
