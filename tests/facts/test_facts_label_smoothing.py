"""Facts taught by questions/label-smoothing.yaml, checked against torch's label_smoothing.

Each single or multi question's test settles every choice with torch (`# choice N` beside the
assertion, N its index in the file) and then checks that the file's key is exactly the set of
choices found true. The cards' tests check the loss's algebra and its optimum with torch; their
findings about calibration, distillation and transfer rest on the papers they cite (Szegedy et al.
2016; Müller, Kornblith and Hinton 2019; Kornblith et al. 2021).
"""

import math
import re

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from bankkeys import right_choices, topic_questions

TOPIC = "label-smoothing"



def _smoothed_target(label: int, num_classes: int, eps: float) -> torch.Tensor:
    q = torch.full((num_classes,), eps / num_classes, dtype=torch.float64)
    q[label] += 1 - eps
    return q


def _entropy(q: torch.Tensor) -> float:
    q = q[q > 0]
    return float(-(q * q.log()).sum())


@pytest.mark.verifies("ls-target-distribution")
def test_torch_smooths_towards_eps_over_k_on_every_class():
    torch.manual_seed(0)
    logits = torch.randn(1, 4, dtype=torch.float64)
    target = torch.tensor([0])
    loss = F.cross_entropy(logits, target, label_smoothing=0.1).item()

    def same_loss_as(dist):
        return loss == pytest.approx(F.cross_entropy(logits, torch.tensor([dist], dtype=torch.float64)).item(), rel=1e-9)

    q = _smoothed_target(0, 4, 0.1)
    assert q.tolist() == pytest.approx([0.925, 0.025, 0.025, 0.025])
    assert same_loss_as([0.925, 0.025, 0.025, 0.025])  # choice 3: true
    assert not same_loss_as([0.9, 0.1 / 3, 0.1 / 3, 0.1 / 3])  # choice 0: the eps/(K-1) variant
    assert not same_loss_as([0.9, 0.025, 0.025, 0.025])  # choice 1: sums to 0.975
    assert not same_loss_as([0.9, 0.1, 0.1, 0.1])  # choice 2: sums to 1.2
    assert right_choices(TOPIC, "ls-target-distribution") == {3}


@pytest.mark.verifies("ls-ce-value")
def test_smoothed_cross_entropy_value():
    logits = torch.tensor([[2.0, 1.0, 0.0]])
    target = torch.tensor([0])
    assert F.cross_entropy(logits, target).item() == pytest.approx(0.4076, abs=1e-4)
    key = topic_questions(TOPIC)["ls-ce-value"].answer
    assert F.cross_entropy(logits, target, label_smoothing=0.1).item() == pytest.approx(key, abs=1e-4)
    assert nn.CrossEntropyLoss(label_smoothing=0.1)(logits, target).item() == pytest.approx(key, abs=1e-4)


@pytest.mark.verifies("ls-minimum-loss", "ls-logit-gap")
def test_minimum_loss_is_the_entropy_of_the_smoothed_target():
    k, eps = 10, 0.1
    q = _smoothed_target(0, k, eps)
    floor = _entropy(q)
    assert floor == pytest.approx(topic_questions(TOPIC)["ls-minimum-loss"].answer, abs=1e-4)

    target = torch.tensor([0])
    at_optimum = F.cross_entropy(q.log()[None], target, label_smoothing=eps).item()
    assert at_optimum == pytest.approx(floor, rel=1e-9)

    def loss_at_gap(gap: float) -> float:
        logits = torch.zeros(1, k, dtype=torch.float64)
        logits[0, 0] = gap
        return F.cross_entropy(logits, target, label_smoothing=eps).item()

    # choice 0: true. The minimum sits at the finite gap ln 91, then the loss grows by 0.09 per unit.
    best_gap = math.log(91)
    assert best_gap == pytest.approx(4.5109, abs=1e-4)
    assert loss_at_gap(best_gap) == pytest.approx(floor, rel=1e-9)
    gaps = [g / 10 for g in range(0, 300)]
    losses = [loss_at_gap(g) for g in gaps]
    assert min(losses) >= floor - 1e-12
    assert abs(gaps[losses.index(min(losses))] - best_gap) < 0.1
    assert loss_at_gap(5) == pytest.approx(0.509, abs=1e-3)
    assert loss_at_gap(10) == pytest.approx(0.900, abs=1e-3)
    assert loss_at_gap(20) == pytest.approx(1.800, abs=1e-3)
    assert loss_at_gap(40) - loss_at_gap(30) == pytest.approx(0.9, abs=1e-3)  # choice 0: slope 0.09
    assert loss_at_gap(40) > loss_at_gap(20) > 0.5  # choice 1: false, it does not go towards 0
    assert loss_at_gap(20) > floor + 1.0  # choice 2: false, it does not stay at the floor
    assert loss_at_gap(0) != pytest.approx(loss_at_gap(10))  # choice 3: false, it depends on the gap
    assert right_choices(TOPIC, "ls-logit-gap") == {0}


@pytest.mark.verifies("ls-torch-semantics")
def test_label_smoothing_semantics_in_cross_entropy():
    torch.manual_seed(0)
    eps, k = 0.2, 5
    logits = torch.randn(6, k)
    target = torch.tensor([0, 1, 2, 3, 4, 0])
    logp = logits.log_softmax(-1)

    loss = F.cross_entropy(logits, target, label_smoothing=eps)
    decomposed = (1 - eps) * F.cross_entropy(logits, target) + eps * (-logp.mean(-1)).mean()
    assert loss.item() == pytest.approx(decomposed.item(), rel=1e-6)  # choice 0: true

    # choice 1: true. Probability targets are smoothed too: p -> (1 - eps) p + eps / K
    p = torch.softmax(torch.randn(6, k), -1)
    smoothed_p = (1 - eps) * p + eps / k
    assert F.cross_entropy(logits, p, label_smoothing=eps).item() == pytest.approx(
        F.cross_entropy(logits, smoothed_p).item(), rel=1e-6)
    assert F.cross_entropy(logits, F.one_hot(target, k).float(), label_smoothing=eps).item() == pytest.approx(
        loss.item(), rel=1e-6)

    # choice 2: false. Above 1 raises, but below 0 is accepted silently and acts as 0; 1.0 is allowed.
    with pytest.raises(RuntimeError, match="label_smoothing"):
        F.cross_entropy(logits, target, label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="label_smoothing"):
        nn.CrossEntropyLoss(label_smoothing=1.5)(logits, target)
    plain = F.cross_entropy(logits, target).item()
    assert F.cross_entropy(logits, target, label_smoothing=-0.1).item() == plain
    assert nn.CrossEntropyLoss(label_smoothing=-0.1)(logits, target).item() == plain
    assert math.isfinite(F.cross_entropy(logits, target, label_smoothing=1.0).item())

    # choice 3: true. ignore_index rows leave both terms and the mean's count
    padded = torch.tensor([0, -100, 2, -100, 4, 0])
    keep = padded != -100
    expected = F.cross_entropy(logits[keep], padded[keep], label_smoothing=eps)
    assert F.cross_entropy(logits, padded, label_smoothing=eps).item() == pytest.approx(expected.item(), rel=1e-6)

    # choice 4: false. The loss module has no parameters or state that could reach the model.
    module = nn.CrossEntropyLoss(label_smoothing=eps)
    assert list(module.parameters()) == [] and module.state_dict() == {}

    # choice 5: false. The gradient p - q reveals the target: the true class gets 1 - eps + eps/K
    z = logits[:1].clone().requires_grad_(True)
    F.cross_entropy(z, target[:1], label_smoothing=eps).backward()
    q = z.detach().softmax(-1)[0] - z.grad[0]
    assert q[0].item() == pytest.approx(1 - eps + eps / k, rel=1e-5)
    assert q[0].item() != pytest.approx(1 - eps, rel=1e-3)
    assert right_choices(TOPIC, "ls-torch-semantics") == {0, 1, 3}


@pytest.mark.verifies("ls-gradient")
def test_gradient_is_softmax_minus_smoothed_target():
    torch.manual_seed(0)
    eps, k = 0.1, 3
    z = torch.tensor([[2.0, 1.0, 0.0]], dtype=torch.float64, requires_grad=True)
    F.cross_entropy(z, torch.tensor([0]), label_smoothing=eps).backward()
    q = _smoothed_target(0, k, eps)
    p = z.detach().softmax(-1)[0]
    one_hot = F.one_hot(torch.tensor(0), k).double()
    assert torch.allclose(z.grad[0], p - q)  # choice 2: true
    assert not torch.allclose(z.grad[0], p - one_hot)  # choice 0: false
    assert not torch.allclose(z.grad[0], (1 - eps) * (p - one_hot))  # choice 1: false
    assert not torch.allclose(z.grad[0], q - p)  # choice 3: false
    assert right_choices(TOPIC, "ls-gradient") == {2}


@pytest.mark.verifies("ls-min-loss-order")
def test_minimum_loss_order():
    # the settings in the file's order, which is the keyed order: it must rise strictly
    items = topic_questions(TOPIC)["ls-min-loss-order"].items
    settings = [tuple(float(v) for v in re.findall(r"= ([0-9.]+)", item)) for item in items]
    floors = [_entropy(_smoothed_target(0, int(k), eps)) for eps, k in settings]
    assert all(a < b for a, b in zip(floors, floors[1:]))
    assert floors == pytest.approx([0.0, 0.282, 0.500, 0.867, 1.015], abs=1e-3)  # the explanation's figures
    # the floor is what torch's loss reaches at p = q
    for (eps, k), floor in zip(settings[1:], floors[1:]):
        logits = _smoothed_target(0, int(k), eps).log()[None]
        assert F.cross_entropy(logits, torch.tensor([0]), label_smoothing=eps).item() == pytest.approx(floor)


def smoothed_ce(logits, target, eps, ignore_index=-100):
    """The card's code: classes on the last dimension, any leading shape."""
    logp = logits.log_softmax(-1)
    valid = target != ignore_index
    safe = torch.where(valid, target, 0)
    nll = -logp.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    uniform = -logp.mean(-1)
    loss = (1 - eps) * nll + eps * uniform
    return loss[valid].mean()


def smoothed_ce_for_rows(logits, target, eps, ignore_index=-100):
    """The same loss written for (N, K) only, with `target[:, None]`."""
    logp = logits.log_softmax(-1)
    valid = target != ignore_index
    nll = -logp.gather(-1, target.clamp_min(0)[:, None]).squeeze(-1)
    uniform = -logp.mean(-1)
    loss = (1 - eps) * nll + eps * uniform
    return loss[valid].mean()


@pytest.mark.verifies("ls-implement-by-hand")
def test_hand_written_smoothed_ce_matches_torch():
    torch.manual_seed(0)
    logits = torch.randn(8, 7) * 5
    target = torch.tensor([0, 6, -100, 3, 2, -100, 1, 5])
    for eps in (0.0, 0.1, 0.3):
        ours = smoothed_ce(logits, target, eps)
        ref = F.cross_entropy(logits, target, ignore_index=-100, label_smoothing=eps)
        assert ours.item() == pytest.approx(ref.item(), rel=1e-6)

    # with class weights, torch weights the smoothing term per class and divides by the targets' weights
    w = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    t = target.clamp_min(0)
    eps, k = 0.2, 7
    logp = logits.log_softmax(-1)
    nll = F.nll_loss(logp, t, weight=w)
    smooth = -(logp * w).sum(-1).sum() / w[t].sum()
    expected = (1 - eps) * nll + eps / k * smooth
    assert F.cross_entropy(logits, t, weight=w, label_smoothing=eps).item() == pytest.approx(expected.item(), rel=1e-6)


# --- the cards ---


def _smoothed_optimum(label: int, num_classes: int, eps: float):
    """Logits at the minimum of the smoothed loss (it is convex in the logits): log q, where the
    gradient softmax(z) - q vanishes. Returns the logits, the gradient there and the loss."""
    q = _smoothed_target(label, num_classes, eps)
    z = q.log().clone().requires_grad_(True)
    loss = F.cross_entropy(z[None], torch.tensor([label]), label_smoothing=eps)
    (grad,) = torch.autograd.grad(loss, z)
    return z.detach(), grad, loss.item()


@pytest.mark.verifies("ls-what-and-why")
def test_smoothed_target_mixture_and_finite_optimum():
    torch.manual_seed(0)
    k, eps = 10, 0.1
    logits, target = torch.randn(6, k), torch.randint(0, k, (6,))
    smoothed = F.cross_entropy(logits, target, label_smoothing=eps)
    soft = F.cross_entropy(logits, (1 - eps) * F.one_hot(target, k) + eps / k)
    mixture = (1 - eps) * F.cross_entropy(logits, target) + eps * (-logits.log_softmax(-1).mean(-1)).mean()
    assert smoothed.item() == pytest.approx(soft.item(), rel=1e-6)
    assert smoothed.item() == pytest.approx(mixture.item(), rel=1e-6)
    # not "cross-entropy plus eps times the uniform term": the first term is down-weighted
    added = F.cross_entropy(logits, target) + eps * (-logits.log_softmax(-1).mean(-1)).mean()
    assert added.item() != pytest.approx(smoothed.item(), rel=1e-3)
    # finite optimum: the logit gap ln(1 + K(1 - eps)/eps)
    z, grad, _ = _smoothed_optimum(0, k, eps)
    assert grad.abs().max() < 1e-7
    assert (z[0] - z[1:]).tolist() == pytest.approx([math.log(1 + k * (1 - eps) / eps)] * (k - 1))
    # one-hot targets: the loss keeps falling as the gap grows, without end
    losses = [F.cross_entropy(torch.tensor([[gap, 0.0]], dtype=torch.float64), torch.tensor([0])).item()
              for gap in (5.0, 10.0, 20.0, 30.0)]
    assert all(b < a for a, b in zip(losses, losses[1:]))


@pytest.mark.verifies("ls-calibration")
def test_smoothed_optimum_caps_the_confidence():
    z, grad, _ = _smoothed_optimum(3, 10, 0.1)
    p = z.softmax(-1)
    assert grad.abs().max() < 1e-7
    assert p[3].item() == pytest.approx(0.91) == 1 - 0.1 + 0.1 / 10
    # a larger eps makes the cap lower
    z, _, _ = _smoothed_optimum(3, 10, 0.3)
    assert z.softmax(-1)[3].item() == pytest.approx(0.73)


@pytest.mark.verifies("ls-when-not")
def test_few_classes_and_the_loss_floor():
    # K = 2, eps = 0.2: the true class's target is 0.9
    assert _smoothed_target(1, 2, 0.2)[1].item() == pytest.approx(0.9)
    # the smoothed loss cannot go below H(q) > 0, where plain cross-entropy goes to 0
    for k, eps in ((2, 0.2), (10, 0.1), (1000, 0.1)):
        _, grad, floor = _smoothed_optimum(0, k, eps)
        assert grad.abs().max() < 1e-7
        assert floor == pytest.approx(_entropy(_smoothed_target(0, k, eps)), rel=1e-9) and floor > 0.3
    assert F.cross_entropy(torch.tensor([[40.0, 0.0]], dtype=torch.float64), torch.tensor([0])).item() < 1e-15


@pytest.mark.verifies("ls-implement-by-hand")
def test_log_of_softmax_underflows_where_log_softmax_does_not():
    logits = torch.tensor([0.0, 200.0])
    assert torch.log(torch.softmax(logits, -1))[0].item() == float("-inf")
    assert torch.log_softmax(logits, -1)[0].item() == pytest.approx(-200.0)
    # eps / (K - 1) on the other classes is a different loss
    logits, target = torch.randn(5, 4), torch.tensor([0, 1, 2, 3, 0])
    other = F.one_hot(target, 4) * (1 - 0.1) + (1 - F.one_hot(target, 4)) * 0.1 / 3
    assert F.cross_entropy(logits, other).item() != pytest.approx(
        F.cross_entropy(logits, target, label_smoothing=0.1).item(), rel=1e-4)


@pytest.mark.verifies("ls-implement-by-hand")
def test_token_shapes_any_ignore_index_and_an_all_padding_batch():
    torch.manual_seed(0)
    b, t, k = 3, 5, 7
    logits = torch.randn(b, t, k, requires_grad=True)
    target = torch.randint(0, k, (b, t))
    target[0, 1] = target[2, 4] = -100
    for eps in (0.0, 0.1):
        ours = smoothed_ce(logits, target, eps)
        # F.cross_entropy wants the classes in dim 1: transpose, or flatten both
        ref = F.cross_entropy(logits.transpose(1, 2), target, ignore_index=-100, label_smoothing=eps)
        flat = F.cross_entropy(logits.flatten(0, -2), target.flatten(), ignore_index=-100, label_smoothing=eps)
        assert ours.item() == pytest.approx(ref.item(), rel=1e-6) == flat.item()
        # same gradient too
        (g_ours,) = torch.autograd.grad(ours, logits)
        (g_ref,) = torch.autograd.grad(ref, logits)
        assert torch.allclose(g_ours, g_ref, atol=1e-7)
    # code written for (N, K): on (B, T) targets gather takes a (B, 1, T) index without a word
    square = torch.randn(4, 4, k)
    square_target = torch.randint(0, k, (4, 4))
    logp = square.log_softmax(-1)
    assert logp.gather(-1, square_target.clamp_min(0)[:, None]).shape == (4, 1, 4)
    wrong = smoothed_ce_for_rows(square, square_target, 0.1)  # B == T: no error at all, a wrong value
    right = F.cross_entropy(square.transpose(1, 2), square_target, label_smoothing=0.1)
    assert wrong.item() != pytest.approx(right.item(), rel=1e-3)
    with pytest.raises(IndexError):  # B != T: the error comes later, at the mask
        smoothed_ce_for_rows(logits.detach(), target, 0.1)
    # any ignore_index: torch.where gives gather a valid index where clamp_min(0) does not
    flat_logits, flat_target = logits.detach().flatten(0, -2), target.flatten().clone()
    flat_target[flat_target == -100] = k
    ref = F.cross_entropy(flat_logits, flat_target, ignore_index=k, label_smoothing=0.1)
    assert smoothed_ce(flat_logits, flat_target, 0.1, ignore_index=k).item() == pytest.approx(ref.item(), rel=1e-6)
    with pytest.raises(RuntimeError):
        smoothed_ce_for_rows(flat_logits, flat_target, 0.1, ignore_index=k)
    # a batch of padding only: nan, as torch gives, with an all-zero gradient
    padding = torch.full((b, t), -100)
    ours = smoothed_ce(logits, padding, 0.1)
    ref = F.cross_entropy(logits.transpose(1, 2), padding, label_smoothing=0.1)
    assert math.isnan(ours.item()) and math.isnan(ref.item())
    for loss in (ours, ref):
        (grad,) = torch.autograd.grad(loss, logits)
        assert torch.equal(grad, torch.zeros_like(grad))
    # dividing by clamp(min=1) returns 0 instead
    valid = padding != -100
    per_pos = torch.zeros(b, t)
    assert (per_pos[valid].sum() / valid.sum().clamp(min=1)).item() == 0.0


def dense_value(logits, targets, k, eps):
    q = F.one_hot(targets, k) * (1 - eps) + eps / k
    return (-(q * logits.log_softmax(-1)).sum(-1).mean()).item()


@pytest.mark.verifies("ls-one-hot-targets")
def test_dense_one_hot_targets():
    torch.manual_seed(0)
    k, eps = 50, 0.1
    logits = torch.randn(6, k)
    targets = torch.tensor([3, 17, 8, 0, 22, 5])  # no padding; the largest id is 22

    def dense(logits, targets):
        q = F.one_hot(targets) * (1 - eps) + eps / logits.size(-1)
        return -(q * logits.log_softmax(-1)).sum(-1).mean()

    # choice 1: true. Width from the batch; then the product with the log-probabilities fails
    assert F.one_hot(targets).shape == (6, 23)
    with pytest.raises(RuntimeError):
        dense(logits, targets)
    # ...except when every target is 0: one column broadcasts silently to a wrong loss
    zeros = torch.zeros(6, dtype=torch.long)
    assert F.one_hot(zeros).shape == (6, 1)
    assert dense(logits, zeros).item() != pytest.approx(F.cross_entropy(logits, zeros, label_smoothing=eps).item())
    # choice 0: false, and choice 4: false. -100 raises, num_classes or not
    padded = torch.tensor([3, -100, 8, 0, -100, 5])
    for call in (lambda: F.one_hot(padded), lambda: F.one_hot(padded, k)):
        with pytest.raises(RuntimeError, match="non-negative"):
            call()
    # choice 2: false. int64 out; the arithmetic with Python floats makes float32 (the default dtype)
    assert F.one_hot(targets, k).dtype == torch.int64
    q = F.one_hot(targets, k) * (1 - eps) + eps / k
    assert q.dtype == torch.float32 == torch.get_default_dtype()
    bf16 = logits.bfloat16()
    assert (-(q * bf16.log_softmax(-1)).sum(-1).mean()).dtype == torch.float32  # a bfloat16 loss promoted
    # with num_classes and no padding, the dense form is torch's loss
    assert dense_value(logits, targets, k, eps) == pytest.approx(
        F.cross_entropy(logits, targets, label_smoothing=eps).item(), rel=1e-6)
    # choice 3: true. 8192 x 32000 int64 entries
    assert 8192 * 32000 * torch.int64.itemsize / 1e9 == pytest.approx(2.1, abs=0.01)
    assert 8192 * 32000 * torch.float32.itemsize / 1e9 == pytest.approx(1.05, abs=0.01)
    small = F.one_hot(torch.randint(0, 32000, (8,)), 32000)
    assert small.numel() * small.element_size() == 8 * 32000 * 8
    # the explanation's sparse form equals torch's loss, padding included, with no (N, K) target
    logp = logits.log_softmax(-1)
    valid = padded != -100
    safe = torch.where(valid, padded, 0)
    nll = -logp.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    sparse = ((1 - eps) * nll - eps * logp.mean(-1))[valid].mean()
    ref = F.cross_entropy(logits, padded, ignore_index=-100, label_smoothing=eps)
    assert sparse.item() == pytest.approx(ref.item(), rel=1e-6)
    assert right_choices(TOPIC, "ls-one-hot-targets") == {1, 3}
