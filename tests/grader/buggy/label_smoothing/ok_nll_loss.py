# quizapp: exercise=label_smoothing
# expect: pass
"""Deliberately buggy: NOT a bug: F.nll_loss for the labelled term, a masked mean for the uniform one."""

import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if smoothing < 0 or smoothing > 1:
        raise ValueError(f"smoothing={smoothing} is outside [0, 1]")
    log_probs = logits.log_softmax(-1)
    keep = targets != ignore_index
    nll = F.nll_loss(log_probs, targets, ignore_index=ignore_index)
    uniform = -log_probs[keep].mean(-1).mean()
    return (1 - smoothing) * nll + smoothing * uniform
