# quizapp: exercise=dpo_loss
# expect: fail dpo-policy-gradients: "the loss does not require grad" "detached rewards"
# expect: skip dpo-reference-frozen: "no backward ran"
"""BUGGY (loss_from_detached_rewards): computes the rewards first, detached for logging, and then builds
the loss from them: the value is right, but no gradient reaches the policy."""

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
    chosen_rewards = (beta * (policy_chosen_logps - ref_chosen_logps)).detach()
    rejected_rewards = (beta * (policy_rejected_logps - ref_rejected_logps)).detach()
    margin = chosen_rewards - rejected_rewards
    ls = label_smoothing
    losses = -(1 - ls) * F.logsigmoid(margin) - ls * F.logsigmoid(-margin)
    return losses.mean(), chosen_rewards, rejected_rewards
