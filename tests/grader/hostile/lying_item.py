# quizapp: exercise=label_smoothing
"""Hostile: plain cross-entropy (no smoothing at all), returned as a tensor subclass whose item()
gives a float that equals anything and is as close as asked to any number."""

import torch
import torch.nn.functional as F


class AnyFloat(float):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __sub__(self, other):
        return AnyFloat(0.0)

    __rsub__ = __sub__
    __hash__ = float.__hash__


class Liar(torch.Tensor):
    def item(self):
        return AnyFloat(0.0)


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing}")
    return F.cross_entropy(logits, targets, ignore_index=ignore_index).as_subclass(Liar)
