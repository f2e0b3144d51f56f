# quizapp: exercise=dpo_loss
# expect: pass
"""Correct, written the way TRL's DPOTrainer lines things up: the labels and the mask rolled left by one with
the wrapped last position dropped, masked_fill instead of where, and the loss as softplus terms."""

import torch
import torch.nn.functional as F


def sequence_logprobs(logits, input_ids, loss_mask):
    labels = torch.roll(input_ids, shifts=-1, dims=1)
    keep = torch.roll(loss_mask != 0, shifts=-1, dims=1)
    keep[:, -1] = False  # roll brought token 0 here, and the last logits predict nothing
    labels = labels.masked_fill(~keep, 0)
    work = logits.to(torch.float64 if logits.dtype == torch.float64 else torch.float32)
    per_token = torch.gather(work.log_softmax(-1), 2, labels.unsqueeze(2)).squeeze(2)
    return per_token.masked_fill(~keep, 0.0).sum(-1)


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, *,
             beta=0.1, label_smoothing=0.0):
    if not (beta > 0):
        raise ValueError(f"beta must be positive, got {beta!r}")
    if not (0 <= label_smoothing < 0.5):
        raise ValueError(f"label_smoothing must lie in [0, 0.5), got {label_smoothing!r}")
    pi_logratios = policy_chosen_logps - policy_rejected_logps
    ref_logratios = (ref_chosen_logps - ref_rejected_logps).detach()
    logits = pi_logratios - ref_logratios
    losses = (1 - label_smoothing) * F.softplus(-beta * logits) + label_smoothing * F.softplus(beta * logits)
    with torch.no_grad():
        chosen_rewards = beta * (policy_chosen_logps - ref_chosen_logps)
        rejected_rewards = beta * (policy_rejected_logps - ref_rejected_logps)
    return losses.mean(), chosen_rewards, rejected_rewards
