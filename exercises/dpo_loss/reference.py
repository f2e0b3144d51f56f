# quizapp: exercise=dpo_loss
"""Reference solution: summed response log-probabilities and the DPO loss with cDPO label smoothing."""

import torch
import torch.nn.functional as F


def sequence_logprobs(logits, input_ids, loss_mask) -> torch.Tensor:
    # Half-precision log-probabilities keep 3 significant digits at best: upcast first. float64 stays.
    work = logits if logits.dtype == torch.float64 else logits.float()
    # The logits at t - 1 predict token t: position 0 is never predicted, the last logits predict nothing.
    log_probs = F.log_softmax(work[:, :-1], dim=-1)
    targets = input_ids[:, 1:]
    counted = loss_mask[:, 1:] != 0
    # Masked positions may hold -100 (or anything): give gather a valid index there, then drop them.
    safe = torch.where(counted, targets, torch.zeros_like(targets))
    per_token = log_probs.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    return torch.where(counted, per_token, torch.zeros_like(per_token)).sum(dim=-1)


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, *,
             beta=0.1, label_smoothing=0.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # Written as "not (valid)" so that NaN, which fails every comparison, is refused too.
    if not beta > 0:
        raise ValueError(f"beta must be > 0, got {beta}")
    if not 0.0 <= label_smoothing < 0.5:
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {label_smoothing}")
    # The reference model is frozen: no gradient may flow into it.
    ref_chosen, ref_rejected = ref_chosen_logps.detach(), ref_rejected_logps.detach()
    chosen_ratio = policy_chosen_logps - ref_chosen
    rejected_ratio = policy_rejected_logps - ref_rejected
    margin = beta * (chosen_ratio - rejected_ratio)
    # logsigmoid stays finite where log(sigmoid(x)) would take the log of an underflowed 0.
    losses = -(1.0 - label_smoothing) * F.logsigmoid(margin) - label_smoothing * F.logsigmoid(-margin)
    return losses.mean(), (beta * chosen_ratio).detach(), (beta * rejected_ratio).detach()
