"""Facts taught by questions/preference-tuning.yaml, checked with torch on the CPU.

Each verified single or multi question's test settles every choice (`# choice N` beside the
assertion, N its index in the file) and then checks that the file's key is exactly the set found
true; numeric questions compute their value and check that the file's key and tolerance take it.
Losses are computed from their formulas in float64; a tiny causal model (embeddings, a causal running
mean, a linear head) stands in for a language model where sequence log-probabilities are needed, and
small discrete distributions are enumerated exactly for the KL facts.

What rests on sources rather than on torch: which models PPO-RLHF trains or freezes, the per-token
placement of the reward and the reasons for the reference model in pref-ppo-rlhf (Ziegler et al. 2019;
Stiennon et al. 2020; Ouyang et al. 2022); in pref-dpo-implicit-reward, that DPO trains no reward model
(choice 2; Rafailov et al. 2023), though the test computes the loss and rewards from the policy and
reference alone; in pref-grpo-properties, that GRPO puts its KL term in the loss rather than the reward
and has no critic (choices 1 and 3; Shao et al. 2024); the KTO and ORPO definitions in pref-ipo-kto-orpo
(Ethayarajh et al. 2024; Hong et al. 2024), whose formulas the test evaluates. Not verified:
pref-rlhf-pipeline-order (Ouyang et al. 2022) and pref-reward-hacking-length (Gao et al. 2023; Singhal
et al. 2023; Park et al. 2024), which rest on those papers.
"""

from __future__ import annotations

import itertools
import math

import pytest
import torch
import torch.nn.functional as F
from bankkeys import accepts, right_choices
from torch import nn

TOPIC = "preference-tuning"
LOG2 = math.log(2)


def _right(qid: str) -> set[int]:
    return right_choices(TOPIC, qid)


def _t(*values):
    return torch.tensor(values, dtype=torch.float64)


def dpo_losses(pc, pr, rc, rr, beta, label_smoothing=0.0):
    """Per-pair DPO loss (with cDPO label smoothing) from summed response log-probabilities."""
    z = (pc - pr) - (rc - rr)
    return -(1 - label_smoothing) * F.logsigmoid(beta * z) - label_smoothing * F.logsigmoid(-beta * z)


class TinyCausalLM(nn.Module):
    """Logits at position t depend on tokens 0..t only (a causal running mean of embeddings)."""

    def __init__(self, vocab=11, d=8, seed=0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.emb = nn.Parameter(torch.randn(vocab, d, generator=g, dtype=torch.float64))
        self.head = nn.Parameter(torch.randn(vocab, d, generator=g, dtype=torch.float64))

    def forward(self, ids):
        h = self.emb[ids].cumsum(1) / torch.arange(1, ids.shape[1] + 1, dtype=torch.float64)[:, None]
        return torch.tanh(h) @ self.head.T


def sequence_logprobs(logits, input_ids, loss_mask):
    """Σ over t >= 1 of mask[t] * log_softmax(logits[t - 1])[ids[t]]; ids may be -100 where masked."""
    logp = torch.log_softmax(logits[:, :-1].to(torch.float64), -1)
    tok = input_ids[:, 1:]
    m = loss_mask[:, 1:].to(logp.dtype)
    per_tok = logp.gather(-1, tok.clamp(min=0)[..., None])[..., 0]
    return (per_tok * m).sum(-1)


# --- reward model ---


@pytest.mark.verifies("pref-reward-model-bt")
def test_bradley_terry_reward_model_loss():
    rw, rl = _t(0.3, 2.0, -1.0), _t(0.3, 1.0, 0.5)
    loss = -F.logsigmoid(rw - rl)
    assert loss[0].item() == pytest.approx(LOG2)  # equal scores
    assert loss[1].item() == pytest.approx(0.31326, abs=1e-5)  # margin 1
    bce = F.binary_cross_entropy_with_logits(rw - rl, torch.ones(3, dtype=torch.float64), reduction="none")
    assert torch.allclose(loss, bce)  # the negative log-likelihood of "chosen wins"
    shift = _t(5.0, -3.0, 100.0)  # one constant per prompt
    assert torch.allclose(-F.logsigmoid((rw + shift) - (rl + shift)), loss)
    rw.requires_grad_()
    (-F.logsigmoid(rw - rl)).sum().backward()
    assert torch.allclose(rw.grad, -torch.sigmoid(rl - rw.detach()))
    assert rw.grad[2].abs() > rw.grad[1].abs()  # the mis-ranked pair gets the larger gradient
    assert [math.comb(k, 2) for k in (4, 9)] == [6, 36]


@pytest.mark.verifies("pref-bt-loss-value")
def test_bradley_terry_loss_of_one_pair():
    value = (-F.logsigmoid(_t(2.5) - _t(1.0))).item()
    assert value == pytest.approx(F.softplus(_t(-1.5)).item())
    assert value == pytest.approx((-F.logsigmoid(_t(12.5) - _t(11.0))).item())
    assert accepts(TOPIC, "pref-bt-loss-value", f"{value:.4f}")
    assert not accepts(TOPIC, "pref-bt-loss-value", f"{math.log10(1 + math.exp(-1.5)):.4f}")  # base 10
    assert not accepts(TOPIC, "pref-bt-loss-value", f"{(-F.logsigmoid(_t(-1.5))).item():.4f}")  # sign flipped


@pytest.mark.verifies("pref-bradley-terry-name")
def test_bradley_terry_name_and_probability():
    for spelling in ("Bradley-Terry", "bradley–terry model", "BT", "Bradley Terry"):
        assert accepts(TOPIC, "pref-bradley-terry-name", spelling), spelling
    for wrong in ("Plackett-Luce", "Elo", "logistic regression"):
        assert not accepts(TOPIC, "pref-bradley-terry-name", wrong), wrong
    s = _t(1.7, -0.4)
    assert torch.softmax(s, 0)[0].item() == pytest.approx(torch.sigmoid(s[0] - s[1]).item())


# --- PPO and its KL penalty, on a two-token model with three tokens in its vocabulary ---


def _two_token_model(seed):
    g = torch.Generator().manual_seed(seed)
    first = torch.softmax(torch.randn(3, generator=g, dtype=torch.float64), 0)
    second = torch.softmax(torch.randn(3, 3, generator=g, dtype=torch.float64), -1)  # row: previous token
    return first, second


def _sequences(model):
    first, second = model
    for y1, y2 in itertools.product(range(3), repeat=2):
        yield (y1, y2), (first[y1].log(), second[y1, y2].log())


@pytest.mark.verifies("pref-ppo-rlhf")
def test_per_token_penalties_sum_to_the_sequence_log_ratio():
    pi, ref = _two_token_model(0), _two_token_model(1)
    beta, score = 0.1, 2.0
    for (seq, lp), (_, lr) in zip(_sequences(pi), _sequences(ref)):
        token_rewards = [-beta * (a - b) for a, b in zip(lp, lr)]
        token_rewards[-1] = token_rewards[-1] + score  # the reward model's score on the last token
        seq_ratio = (lp[0] + lp[1]) - (lr[0] + lr[1])
        assert sum(token_rewards).item() == pytest.approx(score - beta * seq_ratio.item())
    p = {s: (a + b).exp() for s, (a, b) in _sequences(pi)}
    r = {s: (a + b).exp() for s, (a, b) in _sequences(ref)}
    kl = sum(p[s] * (p[s] / r[s]).log() for s in p)
    mean_penalty = sum(p[s] * beta * (p[s] / r[s]).log() for s in p)
    assert mean_penalty.item() == pytest.approx(beta * kl.item())  # β·KL(π ‖ π_ref) on average
    # the optimum of E[r] - β·KL(π ‖ π_ref) is π_ref·exp(r/β)/Z (checked further in the DPO test)


@pytest.mark.verifies("pref-ppo-kl-estimate")
def test_summed_log_ratio_under_the_policy_estimates_forward_kl():
    pi, ref = _two_token_model(2), _two_token_model(3)
    seqs = [(s, lp, lr) for (s, lp), (_, lr) in zip(_sequences(pi), _sequences(ref))]
    p = torch.stack([(lp[0] + lp[1]).exp() for _, lp, _ in seqs])
    r = torch.stack([(lr[0] + lr[1]).exp() for _, _, lr in seqs])
    per_sample = torch.stack([(lp[0] - lr[0]) + (lp[1] - lr[1]) for _, lp, lr in seqs])
    estimate = (p * per_sample).sum()
    forward_kl = (p * (p / r).log()).sum()
    reverse_kl = (r * (r / p).log()).sum()
    entropy = -(p * p.log()).sum()
    assert estimate.item() == pytest.approx(forward_kl.item(), rel=1e-12)  # choice 2
    assert (per_sample < 0).any()  # choice 2's caveat; choice 3: samples can be negative
    per_token = torch.stack([lp[0] - lr[0] for _, lp, lr in seqs] + [lp[1] - lr[1] for _, lp, lr in seqs])
    assert (per_token < 0).any()  # choice 3: per-token log-ratios are not all non-negative
    assert abs(estimate.item() - reverse_kl.item()) > 1e-3  # choice 0
    assert abs(estimate.item() - entropy.item()) > 1e-3  # choice 1
    # GRPO's estimator: non-negative per sample, same expectation under π
    ratio = r / p
    k3 = ratio - ratio.log() - 1
    assert (k3 >= 0).all() and (p * k3).sum().item() == pytest.approx(forward_kl.item(), rel=1e-12)
    assert _right("pref-ppo-kl-estimate") == {2}


# --- DPO ---


@pytest.mark.verifies("pref-dpo")
def test_dpo_derivation_loss_and_gradient():
    g = torch.Generator().manual_seed(4)
    ref = torch.softmax(torch.randn(6, generator=g, dtype=torch.float64), 0)
    reward = torch.randn(6, generator=g, dtype=torch.float64)
    beta = 0.5
    objective = lambda pi: (pi * reward).sum() - beta * (pi * (pi / ref).log()).sum()
    z_part = (ref * (reward / beta).exp()).sum()
    best = ref * (reward / beta).exp() / z_part
    assert objective(best).item() == pytest.approx(beta * z_part.log().item())
    for _ in range(200):  # no other distribution does better
        other = torch.softmax(torch.randn(6, generator=g, dtype=torch.float64) * 2, 0)
        assert objective(other) <= objective(best) + 1e-12
    # r = β·log(π*/π_ref) + β·log Z, and β·log Z cancels between two responses
    assert torch.allclose(reward, beta * (best / ref).log() + beta * z_part.log())
    implicit = beta * (best / ref).log()
    assert torch.allclose(-F.logsigmoid(implicit[0] - implicit[1]), -F.logsigmoid(reward[0] - reward[1]))
    # the loss, its gradient and the value at step 0
    pc, pr = _t(-10.0, -5.0).requires_grad_(), _t(-14.0, -4.0).requires_grad_()
    rc, rr = _t(-11.0, -5.5), _t(-13.0, -4.2)
    loss = dpo_losses(pc, pr, rc, rr, beta=0.1)
    loss.sum().backward()
    z = ((pc - pr) - (rc - rr)).detach()
    assert torch.allclose(pc.grad, -0.1 * torch.sigmoid(-0.1 * z))
    assert torch.allclose(pr.grad, 0.1 * torch.sigmoid(-0.1 * z))
    assert dpo_losses(rc, rr, rc, rr, beta=0.1).tolist() == pytest.approx([LOG2, LOG2])


@pytest.mark.verifies("pref-dpo-loss-value")
def test_dpo_loss_of_one_pair():
    value = dpo_losses(_t(-10.0), _t(-14.0), _t(-11.0), _t(-13.0), beta=0.1).item()
    assert value == pytest.approx(math.log(1 + math.exp(-0.2)))
    assert accepts(TOPIC, "pref-dpo-loss-value", f"{value:.4f}")
    assert not accepts(TOPIC, "pref-dpo-loss-value", f"{LOG2:.4f}")
    assert not accepts(TOPIC, "pref-dpo-loss-value", f"{dpo_losses(_t(-10.0), _t(-14.0), _t(-11.0), _t(-13.0), beta=1.0).item():.4f}")
    assert value < LOG2
    assert (0.1 * (-10.0 + 11.0), 0.1 * (-14.0 + 13.0)) == pytest.approx((0.1, -0.1))


def _pair_batch():
    """One prompt of 3 tokens, a chosen response of 4 and a rejected one of 2 plus 2 right-padding."""
    ids = torch.tensor([[1, 2, 3, 4, 5, 6, 7], [1, 2, 3, 8, 9, 0, 0]])
    response = torch.tensor([[0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 0, 0]], dtype=torch.bool)
    prompt = torch.tensor([[1, 1, 1, 0, 0, 0, 0]] * 2, dtype=torch.bool)
    padding = torch.tensor([[0] * 7, [0, 0, 0, 0, 0, 1, 1]], dtype=torch.bool)
    return ids, response, prompt, padding


@pytest.mark.verifies("pref-dpo-at-init")
def test_dpo_at_step_zero_is_log_two_with_a_gradient():
    policy, ref = TinyCausalLM(seed=5), TinyCausalLM(seed=5)  # the policy starts as a copy
    ids, response, _, _ = _pair_batch()
    lp = sequence_logprobs(policy(ids), ids, response)
    with torch.no_grad():
        lr = sequence_logprobs(ref(ids), ids, response)
    for beta in (0.01, 0.1, 1.0, 5.0):  # choice 0: log 2 for any β; choice 2: not only for β = 1
        assert dpo_losses(lp[:1], lp[1:], lr[:1], lr[1:], beta).item() == pytest.approx(LOG2)
    dpo_losses(lp[:1], lp[1:], lr[:1], lr[1:], 0.1).sum().backward()
    # choices 1 and 3: the loss is not 0 and the gradient is not zero
    assert policy.emb.grad.abs().max() > 1e-6 and policy.head.grad.abs().max() > 1e-6
    assert _right("pref-dpo-at-init") == {0}


@pytest.mark.verifies("pref-dpo-gradients")
def test_dpo_gradient_signs_weights_and_margin_only():
    beta = 0.1
    rc, rr = _t(-10.0, -10.0), _t(-12.0, -12.0)
    pc = _t(-9.0, -20.0).requires_grad_()  # pair 0 ranked right by far, pair 1 ranked wrong
    pr = _t(-40.0, -11.0).requires_grad_()
    dpo_losses(pc, pr, rc, rr, beta).sum().backward()
    z = ((pc - pr) - (rc - rr)).detach()
    assert torch.allclose(pc.grad, -beta * torch.sigmoid(-beta * z))  # choice 0
    assert torch.allclose(pr.grad, -pc.grad) and (pc.grad < 0).all()  # choice 0
    assert pc.grad[0].abs() < pc.grad[1].abs()  # choice 1: the well-ranked pair gets the smaller gradient
    # choice 2: lowering both log-probs, the rejected one more, lowers the loss
    before = dpo_losses(_t(-10.0), _t(-12.0), _t(-10.0), _t(-12.0), beta)
    after = dpo_losses(_t(-11.0), _t(-15.0), _t(-10.0), _t(-12.0), beta)
    assert after < before
    # choice 3: the gradient for log π(y_w) changes with log π(y_l)
    grads = []
    for rejected in (-11.0, -13.0):
        c = _t(-10.0).requires_grad_()
        dpo_losses(c, _t(rejected), _t(-10.0), _t(-12.0), beta).backward()
        grads.append(c.grad.item())
    assert grads[0] != pytest.approx(grads[1])
    # choice 4: doubling β doubles the gradient only at z = 0
    def grad_at(beta_, pc_value):
        c = _t(pc_value).requires_grad_()
        dpo_losses(c, _t(-12.0), _t(-10.0), _t(-12.0), beta_).backward()
        return c.grad.item()
    assert grad_at(0.2, -5.0) / grad_at(0.1, -5.0) != pytest.approx(2.0)
    assert grad_at(0.2, -10.0) / grad_at(0.1, -10.0) == pytest.approx(2.0)
    assert _right("pref-dpo-gradients") == {0}


@pytest.mark.verifies("pref-dpo-beta-limit")
def test_dpo_loss_limits_in_beta():
    z = _t(-8.0, -1.0, 0.5, 3.0, 20.0)
    tiny = 1e-6
    loss = -F.logsigmoid(tiny * z)
    assert torch.allclose(loss, torch.full_like(z, LOG2), atol=1e-5)  # choice 2: log 2 for every pair
    assert torch.allclose(loss, LOG2 - tiny * z / 2, atol=1e-11)
    zz = z.clone().requires_grad_()
    (-F.logsigmoid(tiny * zz)).sum().backward()
    assert torch.allclose(zz.grad / tiny, torch.full_like(z, -0.5), atol=1e-4)  # choice 2: about -β/2
    assert loss[-1].item() > 0.69  # choice 0: no hinge at small β (z > 0 does not go to 0)
    huge = 1e3  # that hinge is the β → ∞ limit
    assert torch.allclose(-F.logsigmoid(huge * z), torch.clamp(-huge * z, min=0), atol=1e-6)
    assert not torch.allclose(loss, -F.logsigmoid(z))  # choice 1
    assert not torch.allclose(-F.logsigmoid(0.1 * z), -F.logsigmoid(0.5 * z))  # choice 3: the loss changes with β
    assert _right("pref-dpo-beta-limit") == {2}


@pytest.mark.verifies("pref-dpo-implicit-reward")
def test_dpo_loss_is_bradley_terry_on_implicit_rewards():
    beta = 0.1
    pc, pr, rc, rr = _t(-10.0, -30.0), _t(-14.0, -22.0), _t(-11.0, -29.0), _t(-13.0, -25.0)
    loss = dpo_losses(pc, pr, rc, rr, beta)
    # choice 3: the rewards come from the policy and the reference alone (choice 2: no reward model)
    reward_c, reward_r = beta * (pc - rc), beta * (pr - rr)
    assert torch.allclose(loss, -F.logsigmoid(reward_c - reward_r))
    log_z = _t(3.0, -7.0)  # a term per prompt cancels
    assert torch.allclose(loss, -F.logsigmoid((reward_c + beta * log_z) - (reward_r + beta * log_z)))
    assert not torch.allclose(loss, -F.logsigmoid(beta * pc - beta * pr))  # choice 1
    # choice 0: σ(βz) is the pair's preference probability, a function of both responses
    assert torch.allclose(torch.sigmoid(beta * ((pc - pr) - (rc - rr))), torch.sigmoid(reward_c - reward_r))
    assert torch.sigmoid(beta * ((pc - pr) - (rc - rr)))[0] != torch.sigmoid(beta * ((pc - pr) - (rc - rr.flip(0))))[0]
    accuracy = (reward_c > reward_r).double().mean()
    assert accuracy.item() == 0.5  # pair 0 ranked right, pair 1 wrong
    assert _right("pref-dpo-implicit-reward") == {3}


@pytest.mark.verifies("pref-dpo-sequence-logprobs")
def test_sequence_logprobs_shift_mask_and_sum():
    policy, ref = TinyCausalLM(seed=6), TinyCausalLM(seed=7)
    ids, response, prompt, padding = _pair_batch()
    with torch.no_grad():
        pl, rl = policy(ids), ref(ids)
    beta = 0.1

    def margin_and_rewards(mask, reduce="sum"):
        lp, lr = sequence_logprobs(pl, ids, mask), sequence_logprobs(rl, ids, mask)
        if reduce == "mean":
            n = mask[:, 1:].sum(-1)
            lp, lr = lp / n, lr / n
        z = (lp[0] - lp[1]) - (lr[0] - lr[1])
        return z, beta * (lp - lr)

    # choice 0: shifted gather equals the chain rule, token by token
    for b in range(2):
        manual = sum(torch.log_softmax(pl[b, t - 1], -1)[ids[b, t]] for t in range(1, 7) if response[b, t])
        assert sequence_logprobs(pl, ids, response)[b].item() == pytest.approx(manual.item(), rel=1e-12)
    unshifted = (torch.log_softmax(pl, -1).gather(-1, ids[..., None])[..., 0] * response).sum(-1)
    assert not torch.allclose(unshifted, sequence_logprobs(pl, ids, response))  # choice 5
    z, rewards = margin_and_rewards(response)
    z_mean, _ = margin_and_rewards(response, "mean")
    assert abs(z.item() - z_mean.item()) > 1e-3  # choices 1 and 4: the mean is another objective
    z_prompt, rewards_prompt = margin_and_rewards(response | prompt)
    assert z_prompt.item() == pytest.approx(z.item(), rel=1e-10, abs=1e-12)  # choice 2: the loss is unchanged
    assert (rewards_prompt - rewards).abs().min() > 1e-3  # choice 2: the logged rewards change
    z_pad, _ = margin_and_rewards(response | padding)
    assert abs(z_pad.item() - z.item()) > 1e-3  # choice 3: padding biases the margin
    same = TinyCausalLM(seed=6)
    with torch.no_grad():
        sl = same(ids)
    pad_terms = sequence_logprobs(pl, ids, padding) - sequence_logprobs(sl, ids, padding)
    assert torch.equal(pad_terms, torch.zeros(2, dtype=torch.float64))  # they cancel only while π = π_ref
    # ids of -100 where the mask is false are never used as indices
    hf_ids = ids.masked_fill(~response, -100)
    assert torch.allclose(sequence_logprobs(pl, hf_ids, response), sequence_logprobs(pl, ids, response))
    assert _right("pref-dpo-sequence-logprobs") == {0, 1, 2}


@pytest.mark.verifies("pref-cdpo-label-smoothing")
def test_conservative_dpo_has_a_finite_best_margin():
    eps = 0.1
    bz = torch.linspace(-5, 30, 350_001, dtype=torch.float64)
    loss = -(1 - eps) * F.logsigmoid(bz) - eps * F.logsigmoid(-bz)
    best = bz[loss.argmin()].item()
    assert best == pytest.approx(math.log(9), abs=1e-3)  # choice 1
    assert loss.min().item() == pytest.approx(-(0.9 * math.log(0.9) + 0.1 * math.log(0.1)), abs=1e-9)
    assert loss[-1] > loss.min() + 2  # choice 1: it rises beyond; choice 0: not toward 0
    assert loss.min().item() > 0.3  # choice 0: it never reaches 0
    x = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    (-(1 - eps) * F.logsigmoid(x) - eps * F.logsigmoid(-x)).backward()
    assert x.grad.item() == pytest.approx(-(1 - 2 * eps) / 2)  # choice 2: still falling at z = 0
    assert loss.min().item() != pytest.approx(-0.1 * math.log(0.1), abs=1e-2)  # choice 3: not 0.23
    assert _right("pref-cdpo-label-smoothing") == {1}


@pytest.mark.verifies("pref-ipo-kto-orpo")
def test_ipo_kto_and_orpo_losses():
    h = torch.linspace(-10, 10, 200_001, dtype=torch.float64)
    tau = 0.1
    ipo = (h - 1 / (2 * tau)) ** 2
    assert h[ipo.argmin()].item() == pytest.approx(5.0, abs=1e-4)  # IPO's finite target 1/(2τ)
    dpo = -F.logsigmoid(tau * h)
    assert (dpo[1:] < dpo[:-1]).all()  # DPO's loss keeps falling: no finite best margin
    # KTO: one label per response, no pairs; at r = z0 both kinds cost λ/2
    beta, z0 = 0.1, _t(0.3)
    r = _t(0.3, 2.0, -2.0)
    desirable = 1.0 * (1 - torch.sigmoid(beta * (r - z0)))
    undesirable = 1.0 * (1 - torch.sigmoid(beta * (z0 - r)))
    assert desirable[0].item() == pytest.approx(0.5) and undesirable[0].item() == pytest.approx(0.5)
    assert desirable[1] < desirable[0] and undesirable[2] < undesirable[0]
    # ORPO: odds of the length-normalised likelihood, no reference model
    mean_lp_w, mean_lp_l = _t(-0.4), _t(-1.1)
    pw, pl = mean_lp_w.exp(), mean_lp_l.exp()
    log_odds = torch.log(pw / (1 - pw)) - torch.log(pl / (1 - pl))
    assert torch.allclose(log_odds, (mean_lp_w - mean_lp_l) - (torch.log1p(-pw) - torch.log1p(-pl)))
    assert (-F.logsigmoid(log_odds)).item() < LOG2  # the chosen response is already the likelier one


# --- GRPO ---


def grpo_advantages(rewards, group, eps=0.0):
    r = rewards.view(-1, group)
    return ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + eps)).view(-1)


@pytest.mark.verifies("pref-grpo-advantage")
def test_grpo_advantage_of_the_one_correct_answer():
    adv = grpo_advantages(_t(1, 0, 0, 0), 4)
    assert adv.tolist() == pytest.approx([1.5, -0.5, -0.5, -0.5])
    assert accepts(TOPIC, "pref-grpo-advantage", f"{adv[0].item():.2f}")
    population = (1 - 0.25) / _t(1, 0, 0, 0).std(unbiased=False).item()
    assert population == pytest.approx(math.sqrt(3))
    assert not accepts(TOPIC, "pref-grpo-advantage", f"{population:.2f}")  # 1.73


@pytest.mark.verifies("pref-grpo-properties")
def test_grpo_group_baseline_properties():
    g = torch.Generator().manual_seed(8)
    rewards = torch.rand(5 * 6, generator=g, dtype=torch.float64)
    adv = grpo_advantages(rewards, 6)  # choice 0: computed from the group's rewards alone, no critic
    assert torch.allclose(adv.view(5, 6).sum(1), torch.zeros(5, dtype=torch.float64), atol=1e-12)  # choice 2
    same = _t(1, 1, 1, 1)
    assert torch.equal(grpo_advantages(same, 4, eps=1e-4), torch.zeros(4, dtype=torch.float64))  # choice 4
    assert torch.isnan(grpo_advantages(same, 4)).all()  # 0/0 without the epsilon
    hard_and_easy = _t(1, 0, 0, 0, 1, 1, 1, 0)
    per_group = grpo_advantages(hard_and_easy, 4)
    assert per_group[0].item() == pytest.approx(1.5) and per_group[4].item() == pytest.approx(0.5)  # choice 5
    batch_wide = (hard_and_easy - hard_and_easy.mean()) / hard_and_easy.std()
    assert batch_wide[0] == batch_wide[4]  # what whole-batch normalisation would do instead
    # choices 1 and 3 rest on the paper (see the module docstring)
    assert _right("pref-grpo-properties") == {0, 2, 4}
