# quizapp: exercise=dpo_loss
# expect: fail dpo-reference-frozen: "ref_chosen_logps.grad is" "exactly minus" "not detached"
"""BUGGY (reference_not_detached): uses the reference log-probs as they come; when they require grad, the
loss backpropagates into the frozen reference model."""

import torch
import torch.nn.functional as F


def sequence_logprobs(logits, input_ids, loss_mask):
    work = logits if logits.dtype == torch.float64 else logits.float()
    log_probs = F.log_softmax(work[:, :-1], dim=-1)
    counted = loss_mask[:, 1:] != 0
    tokens = torch.where(counted, input_ids[:, 1:], 0)
    per_token = log_probs.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    return torch.where(counted, per_token, 0.0).sum(-1)


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, *,
             beta=0.1, label_smoothing=0.0):
    if not beta > 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    if not 0.0 <= label_smoothing < 0.5:
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {label_smoothing}")
    chosen = policy_chosen_logps - ref_chosen_logps
    rejected = policy_rejected_logps - ref_rejected_logps
    z = beta * (chosen - rejected)
    losses = -(1 - label_smoothing) * F.logsigmoid(z) - label_smoothing * F.logsigmoid(-z)
    return losses.mean(), (beta * chosen).detach(), (beta * rejected).detach()
