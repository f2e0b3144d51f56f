# quizapp: exercise=mixup_cutmix
"""mixup, CutMix and the soft-target loss they need. Grade it with: quizapp grade mixup_cutmix.py"""

import math

import torch
import torch.nn.functional as F


def mixup(x, y, *, num_classes, lam, perm):
    """Blend every sample with its partner: returns (mixed_x, targets).

    x    -- (N, C, H, W) floating images; y -- (N,) class indices
    perm -- a permutation of range(N): the partner of sample i is perm[i]
    lam  -- a Python float in [0, 1], drawn by the caller from Beta(alpha, alpha)

      mixed_x = lam * x + (1 - lam) * x[perm]
      targets = lam * onehot(y) + (1 - lam) * onehot(y[perm])     (N, num_classes), in x's dtype

    Never write into x or y. Raise ValueError if lam is not a number in [0, 1] (NaN included)
    or perm is not a permutation of range(N).
    """
    # TODO: validate lam and perm (ValueError with a message that names the value)
    # TODO: mixed_x from x and x[perm] (a new tensor: x stays as it was)
    # TODO: targets: one-hot rows in x's dtype (F.one_hot(y, num_classes).to(x.dtype)), mixed with the same perm
    raise NotImplementedError("mixup is not written yet: see the TODOs in this file")


def cutmix(x, y, *, num_classes, lam, perm, center):
    """Paste a box of each sample's partner into it: returns (mixed_x, targets).

    center -- (cy, cx), the box's centre in pixels; x, y, perm, lam as in mixup.

      h = int(H * sqrt(1 - lam)), w = int(W * sqrt(1 - lam))
      y0 = clip(cy - h // 2, 0, H), y1 = clip(cy + h // 2, 0, H)   (x0, x1 alike with cx, w, W)
      mixed_x = x, except mixed_x[:, :, y0:y1, x0:x1] = x[perm][:, :, y0:y1, x0:x1]
      lam_used = 1 - (y1 - y0) * (x1 - x0) / (H * W)      (the share of pixels kept, after clipping)
      targets = lam_used * onehot(y) + (1 - lam_used) * onehot(y[perm])

    Never write into x or y; the same ValueErrors as mixup.
    """
    # TODO: validate lam and perm
    # TODO: the box's sides, then its ends clipped to the image
    # TODO: mixed_x: a copy of x with the box taken from x[perm]
    # TODO: lam_used from the clipped box's area, then the targets as in mixup
    raise NotImplementedError("cutmix is not written yet: see the TODOs in this file")


def soft_target_cross_entropy(logits, targets) -> torch.Tensor:
    """Cross-entropy against probability targets: the mean over rows of -(targets * log p).sum(-1).

    logits -- (N, num_classes); targets -- (N, num_classes), each row a probability distribution
    Equal to F.cross_entropy(logits, targets); finite for logits of 1e4; carries the graph.
    """
    # TODO: log-probabilities with F.log_softmax (never torch.log of a softmax)
    # TODO: per row, -(targets * log_probs) summed over the classes; then the mean over the rows
    raise NotImplementedError("soft_target_cross_entropy is not written yet: see the TODOs in this file")
