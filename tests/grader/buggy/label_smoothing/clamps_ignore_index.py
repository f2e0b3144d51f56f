# quizapp: exercise=label_smoothing
# expect: fail ignore-index: "ignore_index=5 with 5 classes" "raised RuntimeError: index 5 is out of bounds" "line 18:"
# expect: says ignore-index: "torch.where(keep, targets, 0)" "clamp(min=0) only makes negative values safe"
"""Deliberately buggy: like HF transformers' LabelSmoother, clamps the targets to min=0 before gather; that makes
-100 (and any negative ignore_index) a valid index, but ignore_index=C or larger still indexes out of range."""

import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    log_probs = -F.log_softmax(logits, dim=-1)
    labels = targets.unsqueeze(-1)
    padding_mask = labels.eq(ignore_index)
    # In case the ignore_index is -100, the gather will fail, so we replace labels by 0.
    labels = labels.clamp(min=0)
    nll_loss = log_probs.gather(dim=-1, index=labels)
    smoothed_loss = log_probs.sum(dim=-1, keepdim=True)
    nll_loss = nll_loss.masked_fill(padding_mask, 0.0)
    smoothed_loss = smoothed_loss.masked_fill(padding_mask, 0.0)
    num_active = padding_mask.numel() - padding_mask.long().sum()
    nll_loss = nll_loss.sum() / num_active
    smoothed_loss = smoothed_loss.sum() / (num_active * log_probs.shape[-1])
    return (1 - smoothing) * nll_loss + smoothing * smoothed_loss
