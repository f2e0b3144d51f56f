# quizapp: exercise=dpo_loss
# expect: fail logprobs-sum: "prompt and padding included" "the mask was ignored"
# expect: may-not-pass logprobs-gradient logprobs-masked-ids logprobs-large-logits
"""BUGGY (mask_ignored): counts every predicted token, prompt and padding included; loss_mask is taken
but never used."""

import torch
import torch.nn.functional as F


def sequence_logprobs(logits, input_ids, loss_mask):
    work = logits if logits.dtype == torch.float64 else logits.float()
    log_probs = F.log_softmax(work[:, :-1], dim=-1)
    return log_probs.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1).sum(-1)


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
