"""Facts of questions/mixture-of-experts.yaml, checked with torch on the CPU in one process.

A small reference MoE layer (router softmax in float32, top-k, optional renormalisation, each
expert called once on the rows that chose it) is checked against a dense reference that runs
every expert on every token. Expert parallelism is simulated with per-rank lists and the
all-to-all as a transpose of the (source, destination) buffers. The balancing losses are written
out as the papers and Hugging Face transformers' `load_balancing_loss_func` define them.

Each verified single or multi question's test settles every choice (`# choice N` beside the
assertion, N its index in the file) and checks that the file's key is the set found true.
Numeric questions compute their value (none copies the key) and check that the usual slips are
refused. What rests on sources rather than on torch: in moe-dropped-tokens, that Switch
Transformer does not re-route overflow tokens (choice 1 also fails on its own terms here: the
dropped token's output is its input, not a second expert's output) rests on Fedus et al., 2021;
in moe-aux-below-one, the paper's own wording about uniform routing (Fedus et al., 2021) is
quoted in the explanation, not in a choice. Mixtral's totals (47B stored, 13B active) in
moe-active-params' explanation rest on Jiang et al., 2024. Not verified: moe-stability-fixes (what
the Switch Transformer and ST-MoE papers report) and the cards moe-what-card and
moe-instability-card (the same papers, GShard, MegaBlocks); moe-ep-design-card's arithmetic is
checked here.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from bankkeys import accepts, right_choices
from torch import nn

TOPIC = "mixture-of-experts"


def _right(qid: str) -> set[int]:
    return right_choices(TOPIC, qid)


def _takes(qid: str, value: float, places: int) -> bool:
    """Whether the file's key and tolerance accept value written with `places` decimals."""
    return accepts(TOPIC, qid, f"{value:.{places}f}")


def _route(x, router, k, renorm=True):
    """Router probabilities (float32), gates (x's dtype) and expert indices, as Mixtral's code does."""
    probs = F.softmax(router(x), dim=-1, dtype=torch.float32)
    vals, idx = torch.topk(probs, k, dim=-1)
    gates = vals / vals.sum(-1, keepdim=True) if renorm else vals
    return probs, gates.to(x.dtype), idx


def _sparse(x, experts, gates, idx, calls=None):
    """Each expert once, on the rows that chose it; outputs scattered back with their gates."""
    y = torch.zeros_like(x)
    for e, expert in enumerate(experts):
        tok, slot = (idx == e).nonzero(as_tuple=True)
        if tok.numel() == 0:
            continue
        if calls is not None:
            calls.append((e, tok.numel()))
        y = y.index_add(0, tok, gates[tok, slot, None] * expert(x[tok]))
    return y


def _dense(x, experts, gates, idx):
    """Every expert on every token, then the chosen ones picked out: the reference."""
    every = torch.stack([e(x) for e in experts], dim=1)  # (T, E, d)
    chosen = every.gather(1, idx[..., None].expand(-1, -1, x.shape[-1]))
    return (gates[..., None] * chosen).sum(1)


def _layer(seed=0, d=6, n_experts=8):
    torch.manual_seed(seed)
    router = nn.Linear(d, n_experts)
    experts = nn.ModuleList(nn.Linear(d, d) for _ in range(n_experts))
    return router, experts


def _switch_aux(probs, n_experts):
    """Switch Transformer's N * sum_i f_i P_i (top-1, before alpha)."""
    f = F.one_hot(probs.argmax(-1), n_experts).float().mean(0)
    return n_experts * (f * probs.mean(0)).sum(), f


def _hf_aux(probs, k):
    """transformers' load_balancing_loss_func for one layer without mask, given the probabilities."""
    n_experts = probs.shape[-1]
    _, idx = torch.topk(probs, k, dim=-1)
    tokens_per_expert = F.one_hot(idx, n_experts).float().mean(0)  # (k, E)
    return n_experts * (tokens_per_expert * probs.mean(0)[None]).sum()


# --- routing ---


@pytest.mark.verifies("moe-experts-per-token")
def test_top2_of_8_runs_two_experts_per_token_and_keeps_all_eight():
    router, experts = _layer()
    x = torch.randn(64, 6)
    _, gates, idx = _route(x, router, k=2)
    calls = []
    y = _sparse(x, experts, gates, idx, calls)
    assert torch.allclose(y, _dense(x, experts, gates, idx), atol=1e-6)  # same output as running all 8
    rows = sum(n for _, n in calls)
    assert rows == 2 * len(x)  # choice 0: 2 expert rows per token, not 8
    assert len({e for e, _ in calls}) == len(calls)  # each expert called once
    again = _sparse(x, experts, *_route(x, router, k=2)[1:])
    assert torch.equal(y, again)  # choice 1: deterministic, both chosen experts used, nothing sampled
    used = {e for e, _ in calls}
    n_params = sum(p.numel() for p in experts.parameters())
    assert used == set(range(8))  # choice 2: across the batch every expert is needed
    assert n_params == 8 * sum(p.numel() for p in experts[0].parameters())  # choice 3
    truth = {0: rows == 8 * len(x), 1: False, 2: len(used) == 2, 3: rows == 2 * len(x) and len(used) == 8}
    assert {i for i, v in truth.items() if v} == _right("moe-experts-per-token")


@pytest.mark.verifies("moe-topk-renorm-equal")
def test_renormalised_topk_equals_softmax_over_topk_logits():
    torch.manual_seed(1)
    n_experts = 8

    def rules_agree(logits, k) -> bool:
        probs = torch.softmax(logits, -1)
        va, ia = torch.topk(probs, k, -1)
        gates_a = va / va.sum(-1, keepdim=True)
        vb, ib = torch.topk(logits, k, -1)
        gates_b = torch.softmax(vb, -1)
        return torch.equal(ia, ib) and torch.allclose(gates_a, gates_b, rtol=1e-12, atol=1e-15)

    wide = torch.randn(300, n_experts, dtype=torch.float64) * 3
    close = torch.randn(300, n_experts, dtype=torch.float64) * 0.05  # the dropped logits are not small
    every_k = all(rules_agree(wide, k) and rules_agree(close, k) for k in range(1, n_experts))
    probs = torch.softmax(close, -1)
    kept = torch.topk(probs, 2, -1).values
    assert kept.sum(-1).max() < 0.5  # without renormalisation the gates would differ a lot
    truth = {
        0: not every_k,  # "only for k = 1": they agree for every k
        1: not rules_agree(close, 3),  # "only when the dropped logits are very negative"
        2: every_k,
        3: not every_k,
    }
    assert truth == {0: False, 1: False, 2: True, 3: False}  # choices 0-3
    assert {i for i, v in truth.items() if v} == _right("moe-topk-renorm-equal")


@pytest.mark.verifies("moe-top1-gates")
def test_renormalised_top1_gates_are_one_and_starve_the_router():
    router, experts = _layer(2)
    x = torch.randn(40, 6)
    w = torch.randn(40, 6)
    probs, gates, idx = _route(x, router, k=1)
    y = _sparse(x, experts, gates, idx)
    (y * w).sum().backward()
    renorm_grad = max(router.weight.grad.abs().max().item(), router.bias.grad.abs().max().item())
    router.zero_grad()
    _, switch_gates, _ = _route(x, router, k=1, renorm=False)  # Switch: gate = p, not renormalised
    (_sparse(x, experts, switch_gates, idx) * w).sum().backward()
    switch_grad = router.weight.grad.abs().max().item()
    expert_out = torch.stack([experts[i](x[t]) for t, i in enumerate(idx[:, 0].tolist())])
    soft_mix = sum(probs[:, e, None] * experts[e](x) for e in range(8))
    truth = {
        0: torch.equal(gates, torch.ones_like(gates)),
        1: renorm_grad < 1e-6 < 1e-3 < switch_grad,
        2: idx.dtype.is_floating_point or idx.requires_grad,
        3: torch.allclose(y, probs.max(-1).values[:, None] * expert_out),
        4: torch.allclose(y, soft_mix),
    }
    assert torch.allclose(y, expert_out, atol=1e-6)  # choice 3: the scale is 1
    assert truth == {0: True, 1: True, 2: False, 3: False, 4: False}  # choices 0-4
    assert {i for i, v in truth.items() if v} == _right("moe-top1-gates")


@pytest.mark.verifies("moe-bf16-router-tie")
def test_bfloat16_router_logits_tie():
    logits = torch.tensor([10.00, 10.03])
    low = logits.bfloat16()
    gates_bf16 = torch.softmax(low.float(), -1)  # a float32 softmax cannot undo the rounding
    gates_fp32 = torch.softmax(logits, -1)
    spacing = torch.finfo(torch.bfloat16).eps * 8  # between 8 and 16
    assert spacing == 0.0625 and low.tolist() == [10.0, 10.0]
    assert torch.isfinite(torch.exp(low)).all() and torch.finfo(torch.bfloat16).max > 3e38
    up = torch.softmax(torch.tensor([10.0, 10.0625]), -1)
    assert round(up[1].item(), 3) == 0.516 and round(gates_fp32[1].item(), 4) == 0.5075
    truth = {
        0: low[0] == low[1] and gates_bf16.tolist() == [0.5, 0.5],
        1: torch.allclose(gates_bf16, gates_fp32, atol=1e-4),
        2: not torch.isfinite(torch.exp(low)).all(),
        3: (low[1] - low[0]).item() == spacing,
    }
    assert truth == {0: True, 1: False, 2: False, 3: False}  # choices 0-3
    assert {i for i, v in truth.items() if v} == _right("moe-bf16-router-tie")


# --- balancing losses ---


@pytest.mark.verifies("moe-aux-below-one")
def test_switch_balancing_loss_values():
    counter = torch.tensor([[0.51, 0.49], [0.51, 0.49], [0.01, 0.99]], dtype=torch.float64)
    low, f_low = _switch_aux(counter, 2)
    assert round(low.item(), 3) == 0.896 and f_low.tolist() != [0.5, 0.5]
    # uniform dispatch fractions: exactly 1, whatever the probabilities
    torch.manual_seed(3)
    n = 4
    logits = torch.randn(8, n, dtype=torch.float64)
    for t in range(8):
        logits[t, t % n] += 10  # token t's argmax is expert t mod 4
    at_uniform_f, f = _switch_aux(torch.softmax(logits, -1), n)
    assert f.tolist() == [0.25] * 4
    collapsed, _ = _switch_aux(torch.tensor([[1.0, 0, 0, 0]] * 8, dtype=torch.float64), n)
    eps = 1e-9  # near-uniform probabilities whose argmax is still spread evenly over the experts
    near = torch.full((8, n), 1 / n - eps / (n - 1), dtype=torch.float64)
    near[torch.arange(8), torch.arange(8) % n] = 1 / n + eps
    uniform, f_near = _switch_aux(near, n)
    assert f_near.tolist() == [0.25] * 4
    truth = {
        0: low.item() >= 1,
        1: abs(at_uniform_f.item() - 1) < 1e-12 and low.item() < 1,
        2: collapsed.item() == 0,
        3: abs(uniform.item() - n) < 1e-6,
    }
    assert collapsed.item() == n  # choice 2: all on one expert is the largest value, N
    assert abs(uniform.item() - 1) < 1e-6  # choice 3: uniform routing gives 1
    assert truth == {0: False, 1: True, 2: False, 3: False}  # choices 0-3
    assert {i for i, v in truth.items() if v} == _right("moe-aux-below-one")


@pytest.mark.verifies("moe-aux-gradient")
def test_balancing_loss_gradient():
    torch.manual_seed(4)
    n, d, tokens = 4, 6, 64
    router, experts = _layer(4, d=d, n_experts=n)
    x = torch.randn(tokens, d)
    with torch.no_grad():
        router.bias[0] += 2.0  # expert 0 overloaded
    probs = torch.softmax(router(x), -1)
    loss, f = _switch_aux(probs, n)
    assert f.grad_fn is None and probs.grad_fn is not None  # choice 0: only P is differentiable
    expert_grads = torch.autograd.grad(loss, list(experts.parameters()), allow_unused=True)
    reaches_experts = any(g is not None for g in expert_grads)
    # choice 4: dL/dP_i = N f_i, different per expert
    mean_p = probs.mean(0).detach().requires_grad_()
    (n * (f * mean_p).sum()).backward()
    same_for_all = torch.allclose(mean_p.grad, mean_p.grad[0].expand(n))
    assert torch.allclose(mean_p.grad, n * f)
    # choice 1: descending on the loss alone changes where tokens go
    before = probs.argmax(-1)
    for _ in range(20):  # plain gradient descent on the router
        grads = torch.autograd.grad(_switch_aux(torch.softmax(router(x), -1), n)[0], list(router.parameters()))
        with torch.no_grad():
            for param, grad in zip(router.parameters(), grads):
                param -= 1.0 * grad
    switched = (torch.softmax(router(x), -1).argmax(-1) != before).sum().item()
    # choice 3: with f exactly uniform the logits get no gradient
    logits = torch.randn(8, n, dtype=torch.float64)
    for t in range(8):
        logits[t, t % n] += 5
    logits.requires_grad_()
    uniform_loss, f_u = _switch_aux(torch.softmax(logits, -1), n)
    assert f_u.tolist() == [0.25] * 4
    (g_logits,) = torch.autograd.grad(uniform_loss, logits)
    truth = {
        0: f.grad_fn is None and probs.requires_grad,
        1: switched == 0,
        2: reaches_experts,
        3: g_logits.abs().max().item() < 1e-12,
        4: same_for_all,
    }
    assert truth == {0: True, 1: False, 2: False, 3: True, 4: False}  # choices 0-4
    assert {i for i, v in truth.items() if v} == _right("moe-aux-gradient")


@pytest.mark.verifies("moe-aux-topk-value")
def test_hf_balancing_loss_for_the_table():
    probs = torch.tensor([[0.50, 0.30, 0.10, 0.10],
                          [0.40, 0.35, 0.15, 0.10],
                          [0.45, 0.10, 0.35, 0.10],
                          [0.10, 0.30, 0.20, 0.40]], dtype=torch.float64)
    assert torch.allclose(probs.sum(-1), torch.ones(4, dtype=torch.float64))
    value = _hf_aux(probs, k=2).item()
    balanced = _hf_aux(torch.full((4, 4), 0.25, dtype=torch.float64) + torch.tensor(
        [[1e-9, 2e-9, 0, 0], [0, 0, 1e-9, 2e-9], [1e-9, 2e-9, 0, 0], [0, 0, 1e-9, 2e-9]], dtype=torch.float64), k=2)
    assert round(balanced.item(), 6) == 2  # a balanced top-2 router gives k
    assert _takes("moe-aux-topk-value", value, 2) and _takes("moe-aux-topk-value", value, 6)
    assert not _takes("moe-aux-topk-value", value / 2, 4)  # f normalised to sum to 1
    assert not _takes("moe-aux-topk-value", value / 4, 4)  # the factor E left out
    top1 = _switch_aux(probs, 4)[0].item()
    assert not _takes("moe-aux-topk-value", top1, 4)  # top-1 counts


@pytest.mark.verifies("moe-zloss-value")
def test_router_z_loss_value():
    logits = torch.tensor([[0.0, 0, 0, 0], [4.0, 0, 0, 0]], dtype=torch.float64)
    lse = torch.logsumexp(logits, -1)
    z = (lse**2).mean().item()
    assert _takes("moe-zloss-value", z, 2)
    assert not _takes("moe-zloss-value", (lse**2).sum().item(), 2)  # summed, not averaged
    assert not _takes("moe-zloss-value", lse.mean().item(), 2)  # not squared
    assert not _takes("moe-zloss-value", (logits**2).sum(-1).mean().item(), 2)  # squared logits
    assert lse[0].item() == pytest.approx(math.log(4))  # a uniform router still pays (ln E)^2


@pytest.mark.verifies("moe-capacity")
def test_expert_capacity():
    tokens, k, n_experts, factor = 3000, 2, 64, 1.25
    capacity = math.ceil(tokens * k / n_experts * factor)
    assert _takes("moe-capacity", capacity, 0)
    assert not _takes("moe-capacity", math.floor(tokens * k / n_experts * factor), 0)
    assert not _takes("moe-capacity", math.ceil(tokens / n_experts * factor), 0)  # k left out
    assert not _takes("moe-capacity", math.ceil(tokens * k / n_experts), 0)  # factor left out
    assert n_experts * capacity >= tokens * k


def _capacity_block(x, router, experts, factor):
    """x + MoE(x), top-1 with Switch's gate p, overflow beyond the capacity dropped."""
    n_experts = len(experts)
    probs = torch.softmax(router(x), -1)
    p, idx = probs.max(-1)
    capacity = math.ceil(len(x) / n_experts * factor)
    y = torch.zeros_like(x)
    dropped = torch.zeros(len(x), dtype=torch.bool)
    for e, expert in enumerate(experts):
        tok = (idx == e).nonzero(as_tuple=True)[0]
        keep, drop = tok[:capacity], tok[capacity:]
        dropped[drop] = True
        buffer = torch.zeros(capacity, x.shape[-1])  # padded to the capacity
        buffer[: len(keep)] = x[keep]
        out = expert(buffer)[: len(keep)]
        y[keep] = p[keep, None] * out
    return x + y, dropped, n_experts * capacity, probs


@pytest.mark.verifies("moe-dropped-tokens")
def test_dropped_tokens_pass_through_the_residual():
    n, d = 4, 4
    router = nn.Linear(d, n, bias=False)
    experts = nn.ModuleList(nn.Linear(d, d) for _ in range(n))
    with torch.no_grad():
        router.weight.copy_(torch.eye(n))
    eye = torch.eye(n) * 5
    skewed = eye[[0] * 8]  # every token prefers expert 0
    balanced = eye[[t % n for t in range(8)]]  # two tokens per expert
    with torch.no_grad():
        out, dropped, _, probs = _capacity_block(skewed, router, experts, factor=1.0)
        second = probs.topk(2, -1).indices[:, 1]
        rerouted = skewed + torch.stack([probs[t, second[t]] * experts[second[t]](skewed[t])
                                         for t in range(8)])
        _, dropped_balanced, _, _ = _capacity_block(balanced, router, experts, factor=1.0)
        runs = [_capacity_block(skewed, router, experts, f) for f in (1.0, 2.0)]
        slots = [r[2] for r in runs]  # padded slots
        processed = [int((~r[1]).sum()) for r in runs]  # tokens that got their expert
    truth = {
        0: bool(dropped.any()) and torch.equal(out[dropped], skewed[dropped]),
        1: torch.allclose(out[dropped], rerouted[dropped]),
        2: slots[1] <= slots[0] and processed[1] <= processed[0],
        3: int(dropped_balanced.sum()) == int(dropped.sum()),
    }
    assert slots == [8, 16] and processed == [2, 4]
    assert int(dropped.sum()) == 6 and int(dropped_balanced.sum()) == 0
    assert truth == {0: True, 1: False, 2: False, 3: False}  # choices 0-3
    assert {i for i, v in truth.items() if v} == _right("moe-dropped-tokens")


# --- expert parallelism ---


def _all_to_all(send: list[list[torch.Tensor]]) -> list[list[torch.Tensor]]:
    """send[src][dst] -> recv[dst][src]: every rank sends a different chunk to every rank."""
    n = len(send)
    return [[send[src][dst] for src in range(n)] for dst in range(n)]


def _ep_forward(xs, router, experts, k, ranks):
    """The forward of an expert-parallel MoE layer, in the order the order question gives."""
    per_rank = len(experts) // ranks
    owner = lambda e: e // per_rank  # noqa: E731
    plans, send = [], []
    for x in xs:  # routing and sorting are local to each rank
        probs = F.softmax(router(x), -1, dtype=torch.float32)
        vals, idx = torch.topk(probs, k, -1)
        gates = vals / vals.sum(-1, keepdim=True)
        flat = idx.flatten()
        order = torch.argsort(flat, stable=True)  # copies grouped by expert
        tok = order // k
        ids = flat[order]
        plans.append((gates.flatten()[order], tok))
        send.append([(x[tok[owner(ids) == dst]], ids[owner(ids) == dst]) for dst in range(ranks)])
    recv = _all_to_all(send)  # dispatch
    back = []
    for dst in range(ranks):
        rows = torch.cat([r for r, _ in recv[dst]])
        ids = torch.cat([i for _, i in recv[dst]])
        out = torch.zeros_like(rows)
        for e in ids.unique().tolist():  # each local expert once, on every row it received
            sel = ids == e
            out[sel] = experts[e](rows[sel])
        back.append(list(out.split([len(i) for _, i in recv[dst]])))
    returned = _all_to_all(back)  # combine
    ys = []
    for x, (gates, tok), outs in zip(xs, plans, returned):
        flat_out = torch.cat(outs)  # in the sorted order, since destinations are sorted by expert
        ys.append(torch.zeros_like(x).index_add(0, tok, gates[:, None] * flat_out))
    return ys


@pytest.mark.verifies("moe-all-to-all")
def test_all_to_all_dispatch():
    send = [[torch.tensor([10 * src + dst]) for dst in range(3)] for src in range(3)]
    recv = _all_to_all(send)
    assert [[int(c) for c in row] for row in recv] == [[0, 10, 20], [1, 11, 21], [2, 12, 22]]
    assert _all_to_all(recv) == send  # applied twice: everything is home again
    for spelling in ("All-to-All", "all to all", "AllToAll", "all_to_all_single", "dist.all_to_all"):
        assert accepts(TOPIC, "moe-all-to-all", spelling), spelling
    for wrong in ("all-reduce", "all-gather", "broadcast", "reduce-scatter", "scatter"):
        assert not accepts(TOPIC, "moe-all-to-all", wrong), wrong


@pytest.mark.verifies("moe-ep-forward-order")
def test_expert_parallel_forward_matches_the_dense_layer():
    router, experts = _layer(5, d=6, n_experts=4)
    torch.manual_seed(5)
    xs = [torch.randn(7, 6), torch.randn(5, 6)]
    with torch.no_grad():
        ys = _ep_forward(xs, router, experts, k=2, ranks=2)
        for x, y in zip(xs, ys):
            _, gates, idx = _route(x, router, k=2)
            assert torch.allclose(y, _dense(x, experts, gates, idx), atol=1e-6)


@pytest.mark.verifies("moe-ep-grad-group")
def test_expert_gradients_are_reduced_over_the_copies():
    world, ep, n_experts = 64, 8, 16
    holds = {r: {2 * (r % ep), 2 * (r % ep) + 1} for r in range(world)}
    copies = sorted(r for r in range(world) if 5 in holds[r])
    assert copies == [2, 10, 18, 26, 34, 42, 50, 58]
    group0 = [holds[r] for r in range(ep)]
    assert set().union(*group0) == set(range(n_experts))
    assert all(a.isdisjoint(b) for i, a in enumerate(group0) for b in group0[i + 1:])  # choice 1
    # the copies' gradients on their own tokens sum to the gradient over all the tokens
    torch.manual_seed(6)
    expert = nn.Linear(4, 4)
    tokens = [torch.randn(3 + i, 4) for i in range(len(copies))]
    full = torch.autograd.grad(expert(torch.cat(tokens)).square().sum(), expert.weight)[0]
    per_copy = [torch.autograd.grad(expert(t).square().sum(), expert.weight)[0] for t in tokens]
    assert torch.allclose(sum(per_copy), full)
    unreduced_differ = not torch.allclose(per_copy[0], per_copy[1])  # choice 3: copies would drift
    truth = {
        0: len(copies) == world,
        1: copies == list(range(ep)),
        2: copies == [r for r in range(world) if r % ep == 2],
        3: False,  # the copies are replicas of one expert: unreduced, their updates differ
    }
    assert unreduced_differ
    assert truth == {0: False, 1: False, 2: True, 3: False}  # choices 0-3
    assert {i for i, v in truth.items() if v} == _right("moe-ep-grad-group")


@pytest.mark.verifies("moe-active-params")
def test_active_expert_parameters_of_a_mixtral_like_model():
    def swiglu_expert():
        return nn.ModuleList([nn.Linear(4096, 14336, bias=False, device="meta"),
                              nn.Linear(4096, 14336, bias=False, device="meta"),
                              nn.Linear(14336, 4096, bias=False, device="meta")])

    per_expert = sum(p.numel() for p in swiglu_expert().parameters())
    assert per_expert == 176_160_768
    active = 32 * 2 * per_expert / 1e9
    stored = 32 * 8 * per_expert / 1e9
    assert _takes("moe-active-params", active, 2)
    assert not _takes("moe-active-params", stored, 2) and round(stored, 1) == 45.1
    assert not _takes("moe-active-params", 32 * per_expert / 1e9, 2)  # one expert per token


@pytest.mark.verifies("moe-ep-design-card")
def test_numbers_of_the_expert_parallel_layout():
    experts, gpus_per_node, nodes = 64, 8, 8
    assert experts // gpus_per_node == 8  # experts per GPU with EP 8 inside a node
    assert nodes == 8  # copies of each expert: its expert-data-parallel group
    tokens, k, d, bf16 = 8192, 2, 4096, torch.bfloat16.itemsize
    sent = tokens * k * d * bf16
    assert round(sent / 1e6) == 134 and round(sent * 7 / 8 / 1e6) == 117
