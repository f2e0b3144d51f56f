"""Facts taught by questions/distillation.yaml, checked by running torch.

Each verified single or multi question's test settles every choice (`# choice N` beside the
assertion, N its index in the file) and then checks that the file's key is exactly the set of
choices found true. Numeric and order questions compute the keyed value themselves. The loss
form with the T**2 factor is Hinton, Vinyals and Dean (2015, "Distilling the Knowledge in a
Neural Network"); the tests check what torch computes for it.
"""

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

    # inference_mode targets cannot be saved for the student's backward pass
    s = torch.randn(8, 4, requires_grad=True)
    with torch.inference_mode():
        p_t = F.softmax(teacher(x), dim=-1)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        F.kl_div(F.log_softmax(s, dim=-1), p_t, reduction="batchmean").backward()
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
