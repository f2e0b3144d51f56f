# quizapp: exercise=label_smoothing
# expect: fail value-matches-torch gradient-matches-torch ignore-index all-rows-ignored large-logits-stable
# expect: fail low-and-high-precision returns-scalar-tensor validation
# expect: skip no-builtin-smoothing
# expect: no-number returns-scalar-tensor
"""Does nothing: a loss of 0 that no logit reaches."""

import torch


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100) -> torch.Tensor:
    return torch.zeros((), device=logits.device)
