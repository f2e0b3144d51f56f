# quizapp: exercise=dpo_loss
"""Sequence log-probabilities and the DPO loss. Grade it with: quizapp grade dpo_loss.py"""

import torch
import torch.nn.functional as F


def sequence_logprobs(logits, input_ids, loss_mask) -> torch.Tensor:
    """Sum of the log-probabilities of the response tokens of each row.

    logits    -- (B, L, V) float16, bfloat16, float32 or float64; logits[:, t] predicts token t + 1
    input_ids -- (B, L) int64; where loss_mask is false it may hold anything, -100 included
    loss_mask -- (B, L) bool, or 0/1 ints or floats: true on the response tokens to count

    out[b] = sum over t = 1 .. L-1 with loss_mask[b, t] of log_softmax(logits[b, t - 1])[input_ids[b, t]]

    A sum, not a mean; loss_mask[:, 0] is ignored (position 0 is never predicted); a row with nothing
    counted gives 0. Computed in float32 whatever the logits' dtype (float64 logits stay float64), and
    stable for logits of 1e4. Returns a (B,) tensor that carries the gradient to the logits. None of
    the inputs is modified.
    """
    # TODO: upcast the logits (float64 stays float64), then log_softmax over the vocabulary
    # TODO: pair the logits at t - 1 with the token and the mask at t (drop the last logits, the first token)
    # TODO: give gather a valid index where the mask is false (torch.where), gather, zero those positions
    # TODO: sum over the positions
    raise NotImplementedError("sequence_logprobs is not written yet: see the TODOs in this file")


def dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, *,
             beta=0.1, label_smoothing=0.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The DPO loss with conservative (cDPO) label smoothing, and the implicit rewards.

    Each argument is a (B,) float tensor of summed log-probabilities (what sequence_logprobs returns).
    With z = (policy_chosen - policy_rejected) - (ref_chosen - ref_rejected):

      losses = -(1 - label_smoothing) * logsigmoid(beta * z) - label_smoothing * logsigmoid(-beta * z)

    Returns (losses.mean(), beta * (policy_chosen - ref_chosen), beta * (policy_rejected - ref_rejected)),
    both rewards detached. No gradient reaches the reference log-probs, even when they require grad.
    Finite loss and gradients for margins of +-2e4 with beta up to 1.
    Raise ValueError unless beta > 0 and 0 <= label_smoothing < 0.5 (NaN is neither).
    """
    # TODO: validate beta and label_smoothing (written so that NaN is refused too)
    # TODO: detach the reference log-probs
    # TODO: the margin z, then the losses with F.logsigmoid (never the log of a sigmoid)
    # TODO: return the mean loss and the two rewards, detached
    raise NotImplementedError("dpo_loss is not written yet: see the TODOs in this file")
