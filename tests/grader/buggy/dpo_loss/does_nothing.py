# quizapp: exercise=dpo_loss
# expect: fail logprobs-sum logprobs-gradient logprobs-large-logits dpo-loss-value dpo-rewards
# expect: fail dpo-policy-gradients dpo-large-margins dpo-validation
# expect: skip logprobs-masked-ids logprobs-low-precision logprobs-inputs-unchanged dpo-reference-frozen
"""Does nothing: sums of 0 that no logit reaches, and a loss and rewards of 0."""

import torch


def sequence_logprobs(logits, input_ids, loss_mask):
    return torch.zeros(logits.shape[0], device=logits.device)


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, *,
             beta=0.1, label_smoothing=0.0):
    zeros = torch.zeros_like(policy_chosen_logps).detach()
    return zeros.sum(), zeros, zeros.clone()
