"""Facts taught by questions/optimizers-in-depth.yaml, checked by running torch's optimizers.

Each single or multi question's test settles every choice (`# choice N` beside the assertion, N
its index in the file) and then checks that the file's key is exactly the set found true; each
numeric question's test compares what torch computes with the file's key.
"""

import math

import pytest
import torch
from bankkeys import right_choices, topic_questions

TOPIC = "optimizers-in-depth"


def _key(qid: str):
    return topic_questions(TOPIC)[qid].answer


def scalar(value: float) -> torch.nn.Parameter:
    return torch.nn.Parameter(torch.tensor([value], dtype=torch.float64))


def step_once(optimizer, params, grads) -> None:
    for p, g in zip(params, grads):
        p.grad = None if g is None else torch.full_like(p, g)
    optimizer.step()


@pytest.mark.verifies("oid-adam-moments")
def test_adam_keeps_elementwise_moving_averages_of_g_and_g_squared():
    torch.manual_seed(0)
    p = torch.nn.Parameter(torch.zeros(3, 2, dtype=torch.float64))
    beta1, beta2 = 0.9, 0.999
    optimizer = torch.optim.Adam([p], betas=(beta1, beta2))
    grads = [torch.randn(3, 2, dtype=torch.float64) for _ in range(5)]
    m = torch.zeros_like(p)
    v = torch.zeros_like(p)
    for g in grads:
        p.grad = g.clone()
        optimizer.step()
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
    state = optimizer.state[p]
    # choice 2: exponential moving averages of g and g², element by element
    assert torch.allclose(state["exp_avg"], m) and torch.allclose(state["exp_avg_sq"], v)
    # choice 1: not one number per tensor; the state has the parameter's shape
    assert state["exp_avg"].shape == p.shape and state["exp_avg_sq"].shape == p.shape
    # choice 0: not a plain running mean of the gradients
    assert not torch.allclose(state["exp_avg"], torch.stack(grads).mean(0))
    # choice 3: built from gradients, not from the parameter values or the updates
    assert not torch.allclose(state["exp_avg_sq"], (p.detach() ** 2) * (1 - beta2 ** 5))
    assert right_choices(TOPIC, "oid-adam-moments") == {2}


@pytest.mark.verifies("oid-v-bias-correction")
def test_second_moment_bias_correction_at_step_10():
    p = scalar(0.0)
    optimizer = torch.optim.Adam([p], betas=(0.9, 0.999))
    g = 3.0
    for _ in range(10):
        step_once(optimizer, [p], [g])
    factor = g * g / optimizer.state[p]["exp_avg_sq"].item()  # what turns v_10 back into g²
    assert factor == pytest.approx(_key("oid-v-bias-correction"), abs=0.005)  # two decimals
    assert factor == pytest.approx(1 / (1 - 0.999 ** 10), rel=1e-9)
    assert 1 / (1 - 0.999) == pytest.approx(1000) and math.sqrt(1000) == pytest.approx(32, abs=0.5)  # step 1
    assert 1 / (1 - 0.9 ** 10) == pytest.approx(1.54, abs=0.005)  # the first moment's, for contrast


@pytest.mark.verifies("oid-adam-first-step")
def test_adams_first_step_is_lr_whatever_the_gradient_size():
    moves = {}
    for g in (5000.0, 0.01):
        p = scalar(0.0)
        step_once(torch.optim.Adam([p], lr=1e-3), [p], [g])
        moves[g] = abs(p.item())
    assert moves[5000.0] == pytest.approx(0.001, rel=1e-9)
    assert moves[5000.0] == pytest.approx(_key("oid-adam-first-step"), rel=1e-6)
    assert moves[0.01] == pytest.approx(0.001 * 0.01 / (0.01 + 1e-8), rel=1e-9)
    zero = scalar(0.0)
    step_once(torch.optim.Adam([zero], lr=1e-3), [zero], [0.0])
    assert zero.item() == 0.0  # an exactly zero gradient does not move


@pytest.mark.verifies("oid-adamw-zero-grad-step")
def test_adamw_decays_by_lr_times_weight_decay():
    p = scalar(1.0)
    step_once(torch.optim.AdamW([p], lr=0.1, weight_decay=0.5), [p], [0.0])
    assert p.item() == pytest.approx(1.0 * (1 - 0.1 * 0.5), abs=1e-12)
    assert p.item() == pytest.approx(_key("oid-adamw-zero-grad-step"), abs=1e-12)
    # the decay follows the current lr: torch's decay is lr * wd, not the paper's schedule-only factor
    q = scalar(1.0)
    step_once(torch.optim.AdamW([q], lr=0.01, weight_decay=0.5), [q], [0.0])
    assert q.item() == pytest.approx(1 - 0.01 * 0.5, abs=1e-12)


@pytest.mark.verifies("oid-adam-l2-normalised")
def test_adams_l2_decay_is_normalised_to_about_lr():
    p = scalar(1.0)
    step_once(torch.optim.Adam([p], lr=0.1, weight_decay=0.5), [p], [0.0])
    assert p.item() == pytest.approx(0.9, abs=1e-6)  # choice 3
    assert p.item() != pytest.approx(0.95, abs=1e-3)  # choice 0
    assert p.item() != pytest.approx(1.0, abs=1e-3)  # choice 1
    assert p.item() != pytest.approx(0.5, abs=1e-3)  # choice 2
    # the "whatever wd is" of the explanation: a 100x larger decay gives the same first step
    q = scalar(1.0)
    step_once(torch.optim.Adam([q], lr=0.1, weight_decay=50.0), [q], [0.0])
    assert q.item() == pytest.approx(p.item(), abs=1e-6)
    # choice 2's "without lr": Adam's and AdamW's decay both scale with lr
    for cls, kwargs in ((torch.optim.AdamW, {}), (torch.optim.Adam, {"decoupled_weight_decay": True})):
        r = scalar(1.0)
        step_once(cls([r], lr=0.1, weight_decay=0.5, **kwargs), [r], [0.0])
        assert r.item() == pytest.approx(0.95, abs=1e-12) and r.item() != pytest.approx(0.5)
    assert right_choices(TOPIC, "oid-adam-l2-normalised") == {3}


@pytest.mark.verifies("oid-adamw-default-decay")
def test_default_weight_decays():
    p = torch.nn.Parameter(torch.zeros(1))
    adamw = torch.optim.AdamW([p]).defaults["weight_decay"]
    adam = torch.optim.Adam([p]).defaults["weight_decay"]
    assert adamw == 0.01  # choice 3
    assert adam == 0  # choice 3's contrast, and choice 1 is false
    assert adamw not in (0.1, 0, 1e-4)  # choices 0, 1, 2
    assert right_choices(TOPIC, "oid-adamw-default-decay") == {3}


def _trajectory(make, steps: int = 6) -> list[float]:
    torch.manual_seed(0)
    p = torch.nn.Parameter(torch.randn(4, dtype=torch.float64))
    optimizer = make([p])
    gen = torch.Generator().manual_seed(1)
    # gradients that shrink, so AMSGrad's running max differs from v
    for k in range(steps):
        p.grad = torch.randn(4, dtype=torch.float64, generator=gen) * (10.0 if k == 0 else 0.1)
        optimizer.step()
    return p.detach().tolist()


@pytest.mark.verifies("oid-adamw-equivalents")
def test_what_is_and_is_not_adamw():
    target = _trajectory(lambda ps: torch.optim.AdamW(ps, lr=1e-3, weight_decay=0.1))

    def same(make) -> bool:
        return _trajectory(make) == pytest.approx(target, rel=0, abs=1e-12)

    assert same(lambda ps: torch.optim.Adam(ps, lr=1e-3, weight_decay=0.1, decoupled_weight_decay=True))  # choice 0
    assert not same(lambda ps: torch.optim.Adam(ps, lr=1e-3, weight_decay=0.1))  # choice 1
    assert not same(lambda ps: torch.optim.AdamW(ps, lr=1e-3, weight_decay=0.1, amsgrad=True))  # choice 2
    assert same(lambda ps: torch.optim.AdamW(ps, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1))  # choice 3
    assert not same(lambda ps: torch.optim.Adam(ps, lr=1e-3 * (1 - 0.1)))  # choice 4
    assert right_choices(TOPIC, "oid-adamw-equivalents") == {0, 3}


@pytest.mark.verifies("oid-adafactor-state")
def test_adafactor_keeps_a_row_and_a_column_of_second_moments():
    p = torch.nn.Parameter(torch.zeros(4096, 11008))
    optimizer = torch.optim.Adafactor([p])
    p.grad = torch.ones_like(p)
    optimizer.step()
    state = optimizer.state[p]
    second_moment = sum(v.numel() for k, v in state.items() if k != "step")
    assert set(state) == {"step", "row_var", "col_var"}  # and no first moment
    assert not any("beta1" in k or k == "betas" or "momentum" in k for k in optimizer.defaults)  # not even as an option
    assert second_moment == 4096 + 11008 == _key("oid-adafactor-state")
    assert 4096 * 11008 == 45_088_768


@pytest.mark.verifies("oid-sgd-momentum-bytes")
def test_sgd_momentum_keeps_one_buffer_per_parameter():
    p = torch.nn.Parameter(torch.zeros(1000))
    optimizer = torch.optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = torch.ones_like(p)
    optimizer.step()
    state_bytes = sum(t.numel() * t.element_size() for t in optimizer.state[p].values() if torch.is_tensor(t))
    assert state_bytes / p.numel() == _key("oid-sgd-momentum-bytes")


@pytest.mark.verifies("oid-zero-grad-none")
def test_a_parameter_whose_grad_is_none_is_neither_stepped_nor_decayed():
    a, b = scalar(1.0), scalar(1.0)
    optimizer = torch.optim.AdamW([a, b], lr=0.1, weight_decay=0.1)
    step_once(optimizer, [a, b], [1.0, 1.0])
    optimizer.zero_grad()
    assert a.grad is None and b.grad is None  # zero_grad sets None by default
    before = b.item()
    step_once(optimizer, [a, b], [1.0, None])
    assert b.item() == before  # choice 2: true, untouched; choices 0 and 3: false
    # choice 1: false, the step above ran without raising although b had no gradient
    # choice 3's "counts as zero" is what a real zero gradient does: the stored moments move it
    step_once(optimizer, [a, b], [1.0, 0.0])
    assert b.item() != before
    assert right_choices(TOPIC, "oid-zero-grad-none") == {2}


@pytest.mark.verifies("oid-adamw-step-order")
def test_adamw_decays_before_the_adam_step():
    p = scalar(2.0)
    step_once(torch.optim.AdamW([p], lr=0.1, weight_decay=0.5, eps=0.0), [p], [1.0])
    decay_first = 2.0 * (1 - 0.1 * 0.5) - 0.1 * 1.0
    step_first = (2.0 - 0.1 * 1.0) * (1 - 0.1 * 0.5)
    assert p.item() == pytest.approx(decay_first, abs=1e-12)
    assert p.item() != pytest.approx(step_first, abs=1e-6)
    items = topic_questions(TOPIC)["oid-adamw-step-order"].items  # the keyed order: decay first, step last
    assert "weight_decay" in items[0] and items[-1].startswith("Subtract")


@pytest.mark.verifies("oid-amsgrad")
def test_amsgrad_divides_by_the_running_max_of_v():
    p = scalar(0.0)
    optimizer = torch.optim.Adam([p], amsgrad=True)
    for g in (1.0, 0.01, 0.01):
        step_once(optimizer, [p], [g])
    state = optimizer.state[p]
    v, v_max = state["exp_avg_sq"].item(), state["max_exp_avg_sq"].item()
    assert v_max > v  # choice 1: the largest v so far is kept beside v
    assert v_max == pytest.approx(0.001, rel=1e-12)  # v after the first step: 0.001 · 1²
    # the step uses v_max: recompute the third update by hand and compare
    q = scalar(0.0)
    plain = torch.optim.Adam([q])
    for g in (1.0, 0.01, 0.01):
        step_once(plain, [q], [g])
    assert p.item() != pytest.approx(q.item(), rel=1e-6)  # it changes the steps
    # choice 0: the square root is still there; choice 3: bias correction is still applied
    m = plain.state[q]["exp_avg"].item()
    t = 3
    lr = 1e-3
    expected_last = lr * (m / (1 - 0.9 ** t)) / (math.sqrt(v_max / (1 - 0.999 ** t)) + 1e-8)
    moves = []
    r = scalar(0.0)
    ams = torch.optim.Adam([r], amsgrad=True)
    for g in (1.0, 0.01, 0.01):
        before = r.item()
        step_once(ams, [r], [g])
        moves.append(before - r.item())
    assert moves[-1] == pytest.approx(expected_last, rel=1e-9)
    # choice 2: no window of past gradients: the state holds only the moments and their max
    assert set(state) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}

    # choice 1: the stored max never shrinks, even when v does
    s = scalar(0.0)
    ams = torch.optim.Adam([s], amsgrad=True)
    stored, denominators = [], []
    for t, g in enumerate((1.0, 0.0, 0.0), start=1):
        step_once(ams, [s], [g])
        v_max = ams.state[s]["max_exp_avg_sq"].item()
        stored.append(v_max)
        denominators.append(math.sqrt(v_max / (1 - 0.999 ** t)))
    assert stored[0] == stored[1] == stored[2] > ams.state[s]["exp_avg_sq"].item()
    # the explanation: torch's bias correction still lets the effective step lr / denominator grow
    assert denominators[0] / denominators[1] == pytest.approx(math.sqrt(2), rel=1e-3)
    assert right_choices(TOPIC, "oid-amsgrad") == {1}


@pytest.mark.verifies("oid-fused-keyword")
def test_adamw_has_a_fused_implementation():
    p = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    q = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    fused = torch.optim.AdamW([p], lr=0.1, fused=True)
    loop = torch.optim.AdamW([q], lr=0.1, foreach=False)
    for optimizer, param in ((fused, p), (loop, q)):
        param.grad = torch.tensor([0.3, 0.1])
        optimizer.step()
    assert torch.allclose(p, q)
    assert fused.defaults["fused"] is True
    assert "fused" in _key("oid-fused-keyword")


@pytest.mark.verifies("oid-adam-loss-scale")
def test_scaling_the_loss_moves_sgd_and_clipping_but_not_adam_or_decay():
    def run(optimizer_cls, scale, **kwargs):
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 1).double()
        optimizer = optimizer_cls(model.parameters(), **kwargs)
        x, y = torch.randn(8, 4, dtype=torch.float64), torch.randn(8, 1, dtype=torch.float64)
        norms = []
        for _ in range(3):
            optimizer.zero_grad()
            (scale * torch.nn.functional.mse_loss(model(x), y)).backward()
            norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf")).item())
            optimizer.step()
        return torch.cat([p.detach().flatten() for p in model.parameters()]), norms

    adam_1, norms_1 = run(torch.optim.Adam, 1.0, lr=1e-2, eps=1e-16)
    adam_k, norms_k = run(torch.optim.Adam, 1000.0, lr=1e-2, eps=1e-16)
    assert torch.allclose(adam_1, adam_k, rtol=0, atol=1e-9)  # choice 0
    sgd_1, _ = run(torch.optim.SGD, 1.0, lr=1e-3)
    sgd_k, _ = run(torch.optim.SGD, 1000.0, lr=1e-3)
    assert not torch.allclose(sgd_1, sgd_k, atol=1e-3)  # choice 1
    adamw_1, _ = run(torch.optim.AdamW, 1.0, lr=1e-2, eps=1e-16, weight_decay=0.1)
    adamw_k, _ = run(torch.optim.AdamW, 1000.0, lr=1e-2, eps=1e-16, weight_decay=0.1)
    assert torch.allclose(adamw_1, adamw_k, rtol=0, atol=1e-9)  # choice 2: the decay did not change
    # choice 0 holds for Adam without weight_decay: its L2 term is not scaled with the loss
    l2_1, _ = run(torch.optim.Adam, 1.0, lr=1e-2, eps=1e-16, weight_decay=0.1)
    l2_k, _ = run(torch.optim.Adam, 1000.0, lr=1e-2, eps=1e-16, weight_decay=0.1)
    assert not torch.allclose(l2_1, l2_k, rtol=0, atol=1e-6)
    assert norms_k[0] == pytest.approx(1000 * norms_1[0], rel=1e-9)  # choice 3: the norm that clipping sees
    # choice 3: max_norm = 1.0 on the scaled loss clips exactly where the unscaled norm was above 0.001
    grad = torch.tensor([3e-4, 4e-4, 0.0], dtype=torch.float64)  # norm 5e-4
    for unscaled_norm, clipped in ((5e-4, False), (2e-3, True)):
        p = torch.nn.Parameter(torch.zeros(3, dtype=torch.float64))
        p.grad = 1000 * grad * (unscaled_norm / 5e-4)
        before = p.grad.clone()
        torch.nn.utils.clip_grad_norm_([p], max_norm=1.0)
        assert (not torch.equal(p.grad, before)) == clipped
    assert right_choices(TOPIC, "oid-adam-loss-scale") == {0, 3}


@pytest.mark.verifies("oid-no-decay-why")
def test_normalised_weights_are_scale_invariant_gains_are_not():
    torch.manual_seed(0)
    lin = torch.nn.Linear(8, 8, bias=False).double()
    norm = torch.nn.LayerNorm(8, eps=1e-12, elementwise_affine=False).double()
    x, target = torch.randn(4, 8, dtype=torch.float64), torch.randn(4, 8, dtype=torch.float64)

    def loss_and_grad():
        lin.weight.grad = None
        loss = (norm(lin(x)) - target).pow(2).sum()
        loss.backward()
        return loss.item(), lin.weight.grad.clone()

    loss1, g1 = loss_and_grad()
    with torch.no_grad():
        lin.weight.mul_(0.5)  # what decay does to the norm of a matrix
    loss2, g2 = loss_and_grad()
    assert loss2 == pytest.approx(loss1)  # the function is unchanged...
    assert torch.allclose(g2, 2 * g1)  # ...and the gradient grows as 1/c: bigger relative steps
    assert (g1 * lin.weight).sum().item() == pytest.approx(0.0, abs=1e-9)  # gradient orthogonal to w
    # a gain is not scale-invariant: halving it halves the output
    ln = torch.nn.LayerNorm(8).double()
    y = ln(x)
    with torch.no_grad():
        ln.weight.mul_(0.5)
    assert torch.allclose(ln(x), 0.5 * y)
    # a matrix that writes into a pre-norm residual stream is not scale-invariant either
    out_proj = torch.nn.Linear(8, 8, bias=False).double()
    block = lambda h: h + out_proj(norm(h))  # noqa: E731
    before_scale = norm(block(x))
    with torch.no_grad():
        out_proj.weight.mul_(0.5)
    assert not torch.allclose(norm(block(x)), before_scale, atol=1e-3)
    # AdamW decays embedding rows that were not in the batch (their gradient is a dense zero)
    emb = torch.nn.Embedding(5, 3)
    opt = torch.optim.AdamW(emb.parameters(), lr=0.1, weight_decay=0.1)
    before = emb.weight.detach().clone()
    emb(torch.tensor([0, 1])).sum().backward()
    opt.step()
    assert emb.weight.grad[4].abs().sum() == 0
    assert torch.allclose(emb.weight[4], before[4] * (1 - 0.1 * 0.1))

    class Block(torch.nn.Module):  # GPT-2-style names
        def __init__(self):
            super().__init__()
            self.wte = torch.nn.Embedding(10, 8)
            self.ln_1 = torch.nn.LayerNorm(8)
            self.fc = torch.nn.Linear(8, 8)

    named = dict(Block().named_parameters())
    by_ndim = {n for n, p in named.items() if p.dim() >= 2}  # nanoGPT's rule
    by_name = {n for n in named if not any(k in n for k in ("bias", "LayerNorm"))}  # a BERT-style list
    assert by_ndim == {"wte.weight", "fc.weight"}  # embeddings decayed, gains and biases not
    assert "wte.weight" in by_name  # the name rule decays embeddings too...
    assert "ln_1.weight" in by_name  # ...and silently decays a gain whose name is not "LayerNorm"


def _max_update_over_lr(beta2: float, jump: bool) -> tuple[float, float]:
    lr = 1e-3
    p = scalar(0.0)
    opt = torch.optim.Adam([p], lr=lr, betas=(0.9, beta2))
    for _ in range(2000):  # a calm stretch of small gradients
        step_once(opt, [p], [1e-3])
    moves = []
    for _ in range(30 if jump else 1):  # the gradient grows 1000-fold (and stays, or just once)
        before = p.item()
        step_once(opt, [p], [1.0])
        moves.append(abs(p.item() - before) / lr)
    return max(moves), moves[0]


@pytest.mark.verifies("oid-beta2-llm")
def test_a_slow_second_moment_turns_growing_gradients_into_large_steps():
    assert 1 / (1 - 0.999) == pytest.approx(1000) and 1 / (1 - 0.95) == pytest.approx(20)
    slow_max, slow_first = _max_update_over_lr(0.999, jump=True)
    fast_max, _ = _max_update_over_lr(0.95, jump=True)
    assert 5.5 < slow_max < 6.5  # about 6 x lr
    assert fast_max < 1.2  # about 1.1 x lr at most
    single, _ = _max_update_over_lr(0.999, jump=False)
    assert single == slow_first and 2.9 < single <= 0.1 / math.sqrt(1 - 0.999) + 1e-9  # up to ≈ 3.2 x lr


@pytest.mark.verifies("oid-optimizer-memory-compare")
def test_optimizer_state_bytes_per_parameter():
    def state_bytes(make, shape=(64, 32)):
        p = torch.nn.Parameter(torch.randn(*shape))
        opt = make([p])
        p.grad = torch.randn(*shape)
        opt.step()
        return sum(t.numel() * t.element_size() for t in opt.state[p].values()
                   if isinstance(t, torch.Tensor) and t.dim() > 0), p.numel()

    sgd, n = state_bytes(lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9))
    adamw, _ = state_bytes(lambda ps: torch.optim.AdamW(ps))
    adafactor, _ = state_bytes(lambda ps: torch.optim.Adafactor(ps))
    assert (sgd / n, adamw / n) == (4, 8)  # one float32 buffer; two moments
    assert adafactor == (64 + 32) * 4  # one row and one column of statistics, no first moment
    assert adafactor / adamw < 0.05  # and the saving grows with the matrix size
    vector, m = state_bytes(lambda ps: torch.optim.Adafactor(ps), shape=(32,))
    assert vector == 4 * m  # 1-D tensors keep full statistics
    assert [4 * 7e9 / 1e9, 8 * 7e9 / 1e9] == [28, 56]  # GB for 7B parameters
    # Lion is not in torch: its one momentum buffer (4 bytes) rests on Chen et al. (2023)
    assert not hasattr(torch.optim, "Lion")
    # Adafactor's fixes for a lagging second moment: update clipping d and a rising decay rate
    defaults = torch.optim.Adafactor([torch.nn.Parameter(torch.zeros(2, 2))]).defaults
    assert defaults["d"] == 1.0 and defaults["beta2_decay"] == -0.8


@pytest.mark.verifies("oid-adam-why-sqrt")
def test_adam_steps_are_unit_free_and_eps_sets_where_that_stops():
    def mean_step(grads, lr=1e-3, eps=1e-8, scale=1.0):
        p = torch.nn.Parameter(torch.zeros(len(grads[0]), dtype=torch.float64))
        opt = torch.optim.Adam([p], lr=lr, eps=eps)
        moves = []
        for g in grads:
            before = p.detach().clone()
            p.grad = torch.tensor(g, dtype=torch.float64) * scale
            opt.step()
            moves.append((p.detach() - before).abs() / lr)
        return torch.stack(moves[len(moves) // 2:]).mean(0)  # the later steps, in units of lr

    steady = [[1e-4, 1.0, 1e4]] * 50  # three coordinates, gradients 8 orders of magnitude apart
    assert torch.allclose(mean_step(steady), torch.ones(3, dtype=torch.float64), rtol=1e-3)  # each moves by about lr
    gen = torch.Generator().manual_seed(0)
    noisy = (torch.randn(200, 1, generator=gen, dtype=torch.float64)).tolist()  # sign flips at random
    assert mean_step(noisy).item() < 0.5
    assert torch.allclose(mean_step(steady, scale=1000.0), mean_step(steady), rtol=1e-3)  # loss scale drops out
    # ...while √v̂ stays far above eps: near eps, scaling the loss changes the step
    assert mean_step([[1e-8]] * 4, scale=1000.0).item() > 1.9 * mean_step([[1e-8]] * 4).item()
    # eps: a gradient as small as eps halves the step; a large eps makes the update lr * m / eps
    assert mean_step([[1e-8]]).item() == pytest.approx(0.5, rel=1e-6)
    big_eps = mean_step([[1e-4]], eps=1e-1)
    assert big_eps.item() == pytest.approx(1e-4 / (1e-4 + 1e-1), rel=1e-6)
    assert torch.tensor(1e-8, dtype=torch.float16).item() == 0.0
