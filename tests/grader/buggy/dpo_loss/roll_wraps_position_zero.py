# quizapp: exercise=dpo_loss
# expect: fail logprobs-sum: "loss_mask[3, 0] true" "expected 0" "position 0 was counted" "torch.roll"
# expect: may-not-pass logprobs-gradient logprobs-large-logits
"""BUGGY (roll_wraps_position_zero): shifts the labels and the mask with torch.roll(..., -1), so that the
logits at t line up with token t + 1, but keeps the last position, where roll has wrapped token 0 round: a
row whose loss_mask[:, 0] is true counts log p(input_ids[0] | the last logits)."""

import torch
import torch.nn.functional as F


def sequence_logprobs(logits, input_ids, loss_mask):
    work = logits if logits.dtype == torch.float64 else logits.float()
    labels = torch.roll(input_ids, shifts=-1, dims=1)
    counted = torch.roll(loss_mask, shifts=-1, dims=1) != 0
    labels = torch.where(counted, labels, 0)
    per_token = F.log_softmax(work, dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    return torch.where(counted, per_token, 0.0).sum(-1)


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, *,
             beta=0.1, label_smoothing=0.0):
    if not beta > 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    if not 0.0 <= label_smoothing < 0.5:
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {label_smoothing}")
    chosen = policy_chosen_logps - ref_chosen_logps.detach()
    rejected = policy_rejected_logps - ref_rejected_logps.detach()
    z = beta * (chosen - rejected)
    losses = -(1 - label_smoothing) * F.logsigmoid(z) - label_smoothing * F.logsigmoid(-z)
    return losses.mean(), (beta * chosen).detach(), (beta * rejected).detach()
