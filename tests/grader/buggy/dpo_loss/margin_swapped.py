# quizapp: exercise=dpo_loss
# expect: fail dpo-loss-value: "the loss of -z" "wrong sign"
# expect: may-not-pass dpo-policy-gradients dpo-large-margins
"""BUGGY (margin_swapped): subtracts the policy's log-ratio from the reference's, so z is the negative of
the DPO margin and the loss pushes the policy away from the chosen responses."""

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
    ref_chosen, ref_rejected = ref_chosen_logps.detach(), ref_rejected_logps.detach()
    z = (ref_chosen - ref_rejected) - (policy_chosen_logps - policy_rejected_logps)
    ls = label_smoothing
    losses = -(1 - ls) * F.logsigmoid(beta * z) - ls * F.logsigmoid(-beta * z)
    chosen_rewards = beta * (policy_chosen_logps - ref_chosen)
    rejected_rewards = beta * (policy_rejected_logps - ref_rejected)
    return losses.mean(), chosen_rewards.detach(), rejected_rewards.detach()
