# quizapp: exercise=label_smoothing
"""Hostile: a class where the contract asks for a function; its __new__ returns whatever it likes,
which a view of the module's functions would never see."""

import torch


class label_smoothing_cross_entropy:
    def __new__(cls, logits, targets, *, smoothing=0.1, ignore_index=-100):
        return torch.nn.functional.cross_entropy(logits, targets, label_smoothing=smoothing,
                                                 ignore_index=ignore_index)
