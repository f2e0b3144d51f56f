# quizapp: exercise=dpo_loss
# expect: pass
"""Correct, another way: each token's logit minus the logsumexp of its row (no log_softmax tensor of the
whole vocabulary), the mask as a multiplier, and the arguments checked with math.isnan."""

import math

import torch
import torch.nn.functional as F


def sequence_logprobs(logits, input_ids, loss_mask):
    x = logits[:, :-1]
    if x.dtype in (torch.float16, torch.bfloat16):
        x = x.float()
    counted = loss_mask[:, 1:].bool()
    index = input_ids[:, 1:].masked_fill(~counted, 0)
    picked = x.gather(-1, index[..., None]).squeeze(-1)
    per_token = picked - torch.logsumexp(x, dim=-1)
    return (per_token * counted).sum(dim=1)


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, *,
             beta=0.1, label_smoothing=0.0):
    if math.isnan(beta) or beta <= 0:
        raise ValueError(f"beta={beta}: expected a positive number")
    if math.isnan(label_smoothing) or label_smoothing < 0 or label_smoothing >= 0.5:
        raise ValueError(f"label_smoothing={label_smoothing}: expected 0 <= label_smoothing < 0.5")
    ref_chosen, ref_rejected = ref_chosen_logps.detach(), ref_rejected_logps.detach()
    scaled = beta * ((policy_chosen_logps - ref_chosen) - (policy_rejected_logps - ref_rejected))
    ls = label_smoothing
    loss = -(F.logsigmoid(scaled) * (1 - ls) + F.logsigmoid(-scaled) * ls).mean()
    chosen = beta * (policy_chosen_logps.detach() - ref_chosen)
    rejected = beta * (policy_rejected_logps.detach() - ref_rejected)
    return loss, chosen, rejected
