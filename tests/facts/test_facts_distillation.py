"""Facts taught by questions/distillation.yaml, checked by running torch.

Each verified single or multi question's test settles every choice (`# choice N` beside the
assertion, N its index in the file) and then checks that the file's key is exactly the set of
choices found true. Numeric and order questions compute the keyed value themselves. The loss
form with the T**2 factor is Hinton, Vinyals and Dean (2015, "Distilling the Knowledge in a
Neural Network"); the tests check what torch computes for it.
"""

import math
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from bankkeys import right_choices, topic_questions

from quizapp.bank.answers import check_answer

TOPIC = "distillation"



def soft_kl(s, t, T, reduction="batchmean"):
    return F.kl_div(F.log_softmax(s / T, dim=-1), F.softmax(t / T, dim=-1), reduction=reduction)


def grad_wrt_student(s, t, T, t_squared=True):
    s = s.clone().requires_grad_(True)
    loss = soft_kl(s, t, T) * (T * T if t_squared else 1.0)
    (g,) = torch.autograd.grad(loss, s)
    return g


@pytest.mark.verifies("kd-temperature-prob")
def test_softened_top_probability():
    z = torch.tensor([3.0, 1.0, 0.0])
    p4 = F.softmax(z / 4, dim=-1)
    assert p4[0].item() == pytest.approx(topic_questions(TOPIC)["kd-temperature-prob"].answer, abs=5e-4)
    assert p4[1].item() == pytest.approx(0.292, abs=5e-4)
    assert p4[2].item() == pytest.approx(0.227, abs=5e-4)
    p1 = F.softmax(z, dim=-1)
    assert torch.allclose(p1, torch.tensor([0.844, 0.114, 0.042]), atol=5e-4)
    # the value rounded to 3 places passes; the T = 1 value and the other classes' do not
    q = topic_questions(TOPIC)["kd-temperature-prob"]
    assert check_answer(q, f"{p4[0].item():.3f}").correct
    assert not any(check_answer(q, wrong).correct for wrong in ("0.844", "0.292", "0.5"))


@pytest.mark.verifies("kd-why-t-squared")
def test_t_squared_keeps_gradient_size():
    torch.manual_seed(0)
    s = torch.randn(8, 10)
    t = torch.randn(8, 10)
    with_factor = {T: grad_wrt_student(s, t, T).norm().item() for T in (1, 2, 4, 8, 16, 32)}
    without = {T: grad_wrt_student(s, t, T, t_squared=False).norm().item() for T in (1, 4, 8)}
    assert without[1] == pytest.approx(0.162, abs=1e-3)
    assert without[4] == pytest.approx(0.0096, abs=1e-4)
    assert without[4] / without[8] == pytest.approx(4.0, rel=0.05)  # ~1/T**2 shrinkage
    assert all(0.150 <= v <= 0.163 for v in with_factor.values())  # choice 1: true
    # exact form of the scaled gradient: T * (p_s - p_t) / B
    T = 4
    expected = T * (F.softmax(s / T, dim=-1) - F.softmax(t / T, dim=-1)) / 8
    assert torch.allclose(grad_wrt_student(s, t, T), expected, atol=1e-7)

    # choice 0: false. The scaled KL is still asymmetric
    assert (T * T * soft_kl(s, t, T)).item() != pytest.approx((T * T * soft_kl(t, s, T)).item(), rel=1e-3)
    # choice 2: false. Softened probabilities sum to 1 without any factor
    assert torch.allclose(F.softmax(t / T, dim=-1).sum(-1), torch.ones(8))
    # choice 3: false. Cross-entropy is KL plus the teacher's entropy, not T**2 times KL
    p_t = F.softmax(t / T, dim=-1)
    ce = -(p_t * F.log_softmax(s / T, dim=-1)).sum(-1).mean()
    entropy = -(p_t * p_t.log()).sum(-1).mean()
    assert ce.item() == pytest.approx((soft_kl(s, t, T) + entropy).item(), rel=1e-5)
    assert ce.item() != pytest.approx((T * T * soft_kl(s, t, T)).item(), rel=1e-2)
    assert right_choices(TOPIC, "kd-why-t-squared") == {1}


@pytest.mark.verifies("kd-kl-direction")
def test_kl_div_argument_roles():
    torch.manual_seed(0)
    s = torch.randn(4, 10)
    t = torch.randn(4, 10) * 3
    T = 2.0
    p_t, p_s = F.softmax(t / T, dim=-1), F.softmax(s / T, dim=-1)
    forward_kl = (p_t * (p_t.log() - p_s.log())).sum() / 4
    reverse_kl = (p_s * (p_s.log() - p_t.log())).sum() / 4
    right = F.kl_div(F.log_softmax(s / T, dim=-1), p_t, reduction="batchmean")
    swapped = F.kl_div(F.log_softmax(t / T, dim=-1), p_s, reduction="batchmean")
    assert torch.allclose(right, forward_kl, atol=1e-6)  # choice 0: true
    assert torch.allclose(swapped, reverse_kl, atol=1e-6)  # choice 1: false, the reverse KL...
    assert not torch.allclose(right, swapped, atol=1e-3)
    # choice 2: false. Probabilities instead of log-probabilities give a different number, silently
    wrong_input = F.kl_div(p_s, p_t, reduction="batchmean")
    assert not torch.allclose(wrong_input, forward_kl, atol=1e-3)
    # choice 3: false. log(softmax) agrees on tame logits but is not stable: large gaps give nan
    logged = F.kl_div(torch.log(F.softmax(s / T, dim=-1)), p_t, reduction="batchmean")
    assert torch.allclose(logged, forward_kl, atol=1e-5)
    big_s, big_t = torch.tensor([[1000.0, 0.0, -1000.0]]), torch.tensor([[0.0, 1000.0, 0.0]])
    assert torch.isnan(F.kl_div(torch.log(F.softmax(big_s, -1)), F.softmax(big_t, -1), reduction="batchmean"))
    assert torch.isfinite(F.kl_div(F.log_softmax(big_s, -1), F.softmax(big_t, -1), reduction="batchmean"))
    assert right_choices(TOPIC, "kd-kl-direction") == {0}


@pytest.mark.verifies("kd-batchmean")
def test_mean_is_num_classes_times_smaller():
    torch.manual_seed(0)
    s = torch.randn(32, 10)
    t = torch.randn(32, 10)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mean = soft_kl(s, t, 1.0, reduction="mean")
    batchmean = soft_kl(s, t, 1.0, reduction="batchmean")
    assert (batchmean / mean).item() == pytest.approx(topic_questions(TOPIC)["kd-batchmean"].answer, rel=1e-5)
    assert (batchmean / mean).item() == pytest.approx(s.shape[1], rel=1e-5)  # the number of classes
    assert any("batchmean" in str(w.message) for w in caught)
    # batchmean divides by the first dimension only: (B, T, V) logits are summed over T
    s3, t3 = torch.randn(4, 6, 10), torch.randn(4, 6, 10)
    per_sequence = soft_kl(s3, t3, 1.0)
    per_token = soft_kl(s3.flatten(0, 1), t3.flatten(0, 1), 1.0)
    assert (per_sequence / per_token).item() == pytest.approx(6, rel=1e-5)


@pytest.mark.verifies("kd-teacher-eval")
def test_eval_and_no_grad_do_different_jobs():
    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(),
                            nn.Dropout(0.5), nn.Linear(16, 4))
    x = torch.randn(8, 6)
    bn = teacher[1]

    # no_grad alone: dropout still random, BatchNorm running stats still change.
    teacher.train()
    before = bn.running_mean.clone()
    with torch.no_grad():
        a, b = teacher(x), teacher(x)
    assert not torch.equal(a, b)  # choice 3: false, and choice 4: true (dropout without eval)
    assert not torch.equal(bn.running_mean, before)  # choice 0: false, the stats still move
    assert not a.requires_grad

    # eval alone: deterministic and buffers frozen, but autograd still records the graph.
    teacher.eval()
    frozen = bn.running_mean.clone()
    out = teacher(x)
    assert out.requires_grad and out.grad_fn is not None  # choice 1: false; choice 2: true, a graph is recorded
    assert torch.equal(out, teacher(x))
    assert torch.equal(bn.running_mean, frozen)

    # both: deterministic, no graph
    with torch.no_grad():
        out = teacher(x)
    assert not out.requires_grad and out.grad_fn is None

    # inference_mode targets cannot be saved for the student's backward pass: the kl_div call
    # itself raises, before any backward()
    s = torch.randn(8, 4, requires_grad=True)
    with torch.inference_mode():
        p_t = F.softmax(teacher(x), dim=-1)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        F.kl_div(F.log_softmax(s, dim=-1), p_t, reduction="batchmean")
    # a clone is a normal tensor and works
    F.kl_div(F.log_softmax(s, dim=-1), p_t.clone(), reduction="batchmean").backward()
    assert s.grad is not None
    assert right_choices(TOPIC, "kd-teacher-eval") == {2, 4}


@pytest.mark.verifies("kd-order-temperature")
def test_entropy_rises_with_temperature():
    z = torch.tensor([3.0, 1.0, 0.0, -1.0])
    temps = [float(item.split("=")[1]) for item in topic_questions(TOPIC)["kd-order-temperature"].items]  # the keyed order
    ent = []
    for T in temps:
        p = F.softmax(z / T, dim=-1)
        ent.append(-(p * p.log()).sum().item())
    assert ent == sorted(ent) and len(set(ent)) == 4
    assert ent == pytest.approx([0.11, 0.60, 1.31, 1.38], abs=0.01)
    assert ent[-1] < torch.log(torch.tensor(4.0)).item()


@pytest.mark.verifies("kd-large-logits-nan")
def test_log_of_softmax_gives_nan_log_softmax_does_not():
    s = torch.tensor([[1000.0, 0.0, -1000.0]])
    t = torch.tensor([[0.0, 1000.0, 0.0]])
    p_s = F.softmax(s, dim=-1)
    assert torch.isfinite(p_s).all()          # softmax itself does not overflow
    assert (p_s == 0).any()                   # but it underflows to exact zeros
    assert torch.isinf(torch.log(p_s)).any()
    bad = F.kl_div(torch.log(p_s), F.softmax(t, dim=-1), reduction="batchmean")
    good = F.kl_div(F.log_softmax(s, dim=-1), F.softmax(t, dim=-1), reduction="batchmean")
    assert torch.isnan(bad)  # choice 3: true, underflow then log(0)...
    assert torch.isfinite(good) and good.item() == pytest.approx(1000.0)  # ...and log_softmax fixes it

    # choice 0: false. Subtracting the row maximum first changes nothing: softmax already does it
    assert torch.equal(F.softmax(s - s.max(dim=-1, keepdim=True).values, dim=-1), p_s)
    # choice 1: false. log_target=True with the teacher's log-probabilities is still nan
    assert torch.isnan(F.kl_div(torch.log(p_s), F.log_softmax(t, dim=-1), reduction="batchmean", log_target=True))
    # choice 2: false. T = 20 only moves the threshold: larger logits underflow again
    T = 20.0
    big_s, big_t = s * 100, t * 100
    assert torch.isnan(F.kl_div(torch.log(F.softmax(big_s / T, dim=-1)), F.softmax(big_t / T, dim=-1),
                                reduction="batchmean"))
    assert right_choices(TOPIC, "kd-large-logits-nan") == {3}


@pytest.mark.verifies("kd-high-temperature-limit")
def test_high_temperature_limit_is_logit_matching():
    torch.manual_seed(0)
    B, C = 8, 10
    s = torch.randn(B, C)
    t = torch.randn(B, C)
    s = s - s.mean(dim=-1, keepdim=True)
    t = t - t.mean(dim=-1, keepdim=True)
    limit = (s - t) / (C * B)

    def rel_gap(T):
        return ((grad_wrt_student(s, t, T) - limit).norm() / limit.norm()).item()

    assert rel_gap(1) > 0.3
    assert rel_gap(20) == pytest.approx(0.031, abs=0.005)
    assert rel_gap(100) < 0.01  # choice 2: true
    assert rel_gap(20) / rel_gap(100) == pytest.approx(5, rel=0.05)  # shrinking like 1/T
    # the gap depends on logits / T only: logits 10 times larger need a 10 times larger T
    wide_gap = ((grad_wrt_student(10 * s, 10 * t, 200) - 10 * limit).norm() / (10 * limit).norm()).item()
    assert wide_gap == pytest.approx(rel_gap(20), rel=1e-3)
    high = grad_wrt_student(s, t, 100)
    # choice 0: false. With T**2 it does not vanish (only without the factor does it)
    assert high.norm() > 0.9 * limit.norm()
    assert grad_wrt_student(s, t, 100, t_squared=False).norm() < 1e-3 * limit.norm()
    # choice 1: false. It levels off instead of growing like T
    assert (grad_wrt_student(s, t, 200).norm() / high.norm()).item() == pytest.approx(1.0, abs=0.01)
    assert not torch.allclose(high, 100 * (s - t) / B, rtol=0.5)
    # choice 3: false. The T = 1 gradient is a different vector
    at_one = (F.softmax(s, dim=-1) - F.softmax(t, dim=-1)) / B
    assert ((high - at_one).norm() / at_one.norm()).item() > 0.3
    assert right_choices(TOPIC, "kd-high-temperature-limit") == {2}


def _log_probs(small: dict[int, float], label: int = 2, classes: int = 10) -> torch.Tensor:
    """A confident teacher's log-probabilities: `small` for the listed wrong classes, 1e-12 for the
    others, and the rest on the label."""
    probs = torch.full((classes,), 1e-12, dtype=torch.float64)
    for c, v in small.items():
        probs[c] = v
    probs[label] = 0.0
    probs[label] = 1 - probs.sum()
    return probs.log()


@pytest.mark.verifies("kd-dark-knowledge")
def test_temperature_exposes_the_wrong_class_probabilities():
    # two images of a 2: one looks a little like a 3, the other a little like a 7
    like_3 = _log_probs({3: 1e-6, 7: 1e-9})
    like_7 = _log_probs({3: 1e-9, 7: 1e-6})
    student = torch.zeros(10, dtype=torch.float64)

    def grad(teacher_logits, T):
        s = student.clone().requires_grad_(True)
        target = F.softmax(teacher_logits / T, dim=-1)
        (T * T * F.kl_div(F.log_softmax(s / T, dim=-1), target, reduction="sum")).backward()
        return s.grad

    one_hot = F.one_hot(torch.tensor(2), 10).double()
    hard = torch.autograd.functional.jacobian(lambda s: F.cross_entropy(s[None], torch.tensor([2])), student)
    # T = 1: both soft targets are the one-hot label to within 1e-6, and so are their gradients
    assert torch.allclose(F.softmax(like_3, -1), one_hot, atol=2e-6)
    assert torch.allclose(grad(like_3, 1.0), hard, atol=2e-6) and torch.allclose(grad(like_7, 1.0), hard, atol=2e-6)
    # T = 5: the small probabilities are lifted by orders of magnitude, and the two images now differ
    lifted = F.softmax(like_3 / 5, -1)
    assert lifted[3] > 1e3 * 1e-6 and lifted[3] > lifted[7] > 1e-9 * 1e3
    assert (grad(like_3, 5.0) - grad(like_7, 5.0)).abs().max() > 1e-2


@pytest.mark.verifies("kd-loss-combination")
def test_soft_gradient_falls_like_one_over_t_squared_without_the_factor():
    torch.manual_seed(0)
    s, t = torch.randn(8, 10), torch.randn(8, 10)
    without = {T: grad_wrt_student(s, t, T, t_squared=False).norm().item() for T in (4, 8, 16)}
    with_factor = {T: grad_wrt_student(s, t, T).norm().item() for T in (1, 2, 4, 8, 16)}
    assert without[4] / without[8] == pytest.approx(4, rel=0.05)  # roughly 1/T²
    assert without[8] / without[16] == pytest.approx(4, rel=0.02)  # and closer as T grows
    assert max(with_factor.values()) / min(with_factor.values()) < 1.1  # about constant with T²
    # the exact per-example gradient of the KL term: (softmax(s/T) - softmax(t/T)) / T, divided by B
    T = 4
    expected = (F.softmax(s / T, -1) - F.softmax(t / T, -1)) / T / 8
    assert torch.allclose(grad_wrt_student(s, t, T, t_squared=False), expected, atol=1e-8)
    # the whole loss: the hard term at T = 1, and no gradient reaches a teacher run under no_grad
    teacher, student = nn.Linear(5, 10), nn.Linear(5, 10)
    x, y, alpha = torch.randn(8, 5), torch.randint(0, 10, (8,)), 0.7
    teacher.eval()
    with torch.no_grad():
        t_logits = teacher(x)
    s_logits = student(x)
    loss = alpha * T * T * soft_kl(s_logits, t_logits, T) + (1 - alpha) * F.cross_entropy(s_logits, y)
    loss.backward()
    assert not t_logits.requires_grad and teacher.weight.grad is None and student.weight.grad is not None


def _attention_map(features: torch.Tensor) -> torch.Tensor:
    """Zagoruyko and Komodakis: the channel-wise sum of squared activations, flattened and L2-normalised."""
    return F.normalize(features.pow(2).sum(dim=1).flatten(1), dim=1)


@pytest.mark.verifies("kd-feature-distillation")
def test_attention_maps_need_no_regressor_raw_features_do():
    torch.manual_seed(0)
    teacher_features, student_features = torch.randn(4, 256, 8, 8), torch.randn(4, 64, 8, 8)
    # raw features of different widths cannot be compared without a learned map (FitNets' regressor)
    with pytest.raises(RuntimeError), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the size-mismatch warning that comes before the error
        F.mse_loss(student_features, teacher_features)
    regressor = nn.Conv2d(64, 256, kernel_size=1)  # widths differ only: a 1x1 conv suffices
    assert F.mse_loss(regressor(student_features), teacher_features).requires_grad
    # FitNets' convolutional regressor: a kernel of N_guided - N_hint + 1 also matches the spatial sizes
    larger = torch.randn(4, 64, 10, 10)
    fitnets = nn.Conv2d(64, 256, kernel_size=10 - 8 + 1)
    assert fitnets(larger).shape == teacher_features.shape
    # attention maps do not depend on the channel count: same shape, unit norm, directly comparable
    a_t, a_s = _attention_map(teacher_features), _attention_map(student_features)
    assert a_t.shape == a_s.shape == (4, 64)
    assert torch.allclose(a_t.norm(dim=1), torch.ones(4))
    assert torch.allclose(_attention_map(10 * student_features), a_s)  # normalised: the feature scale drops out


def _log_bump(x: torch.Tensor, mu: float, sigma: float) -> torch.Tensor:
    return torch.log_softmax(-((x - mu) ** 2) / (2 * sigma**2), dim=0)


@pytest.mark.verifies("kd-forward-vs-reverse-kl")
def test_forward_kl_covers_both_modes_reverse_kl_picks_one():
    x = torch.linspace(-6, 6, 61, dtype=torch.float64)
    teacher = torch.logsumexp(torch.stack([_log_bump(x, -3, 0.5), _log_bump(x, 3, 0.5)]), 0) - math.log(2)

    def kl(log_p, log_q):
        return (log_p.exp() * (log_p - log_q)).sum().item()

    # a small student: one bump, any centre and width
    grid = [(mu / 4, sigma / 4) for mu in range(-16, 17) for sigma in range(1, 21)]
    forward = min(grid, key=lambda g: kl(teacher, _log_bump(x, *g)))
    reverse = min(grid, key=lambda g: kl(_log_bump(x, *g), teacher))
    assert forward[0] == 0.0 and forward[1] >= 3.0  # mass-covering: wide, centred between the modes
    assert abs(reverse[0]) == 3.0 and reverse[1] == 0.5  # mode-seeking: sits exactly on one mode
    # F.kl_div(input, target) is KL(target || input): swapping the arguments flips the direction
    s = _log_bump(x, 0.0, 3.0)
    assert F.kl_div(s, teacher, reduction="sum", log_target=True).item() == pytest.approx(kl(teacher, s))
    assert F.kl_div(teacher, s, reduction="sum", log_target=True).item() == pytest.approx(kl(s, teacher))
