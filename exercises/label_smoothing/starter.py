# quizapp: exercise=label_smoothing
"""Label-smoothed cross-entropy, from log_softmax. Grade it with: quizapp grade label_smoothing.py"""

import torch
import torch.nn.functional as F


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100) -> torch.Tensor:
    """Cross-entropy against smoothed targets, equal to
    F.cross_entropy(logits, targets, label_smoothing=smoothing, ignore_index=ignore_index).

    logits  -- (N, C) raw scores
    targets -- (N,) class indices; rows whose target is ignore_index do not count at all

    The target distribution of a row is (1 - smoothing) on its class plus smoothing / C on every
    class (its own included). Return the mean over the rows that are not ignored, as a 0-dim
    tensor that carries the graph. Stay finite for logits of 1e4.
    Raise ValueError if smoothing is outside [0, 1].
    Do not use F.cross_entropy's own label_smoothing argument: the point is to write it.
    """
    # TODO: validate smoothing (ValueError with a message that names the value)
    # TODO: log-probabilities with F.log_softmax (never torch.log of a softmax)
    # TODO: per row, the negative log-probability of the target class (gather)
    # TODO: per row, the mean over classes of the negative log-probabilities (the uniform part)
    # TODO: mix them: (1 - smoothing) * nll + smoothing * uniform
    # TODO: average over the rows whose target is not ignore_index
    raise NotImplementedError("label_smoothing_cross_entropy is not written yet: see the TODOs in this file")
