# quizapp: exercise=magnitude_pruning
"""Magnitude pruning: global unstructured, by L2 channel, then permanent. Grade it with:
quizapp grade magnitude_pruning.py"""

import torch
from torch import nn


def prune_global(model, amount) -> dict[str, float]:
    """Zero the round(amount * total) weights of smallest |w| among the weights (not biases) of every
    nn.Linear and nn.Conv2d in `model`, ranked together across layers; keep them at zero through any
    later training. A second call prunes round(amount * alive) more among the weights still alive.

    amount -- a fraction in [0, 1] (an int 0 or 1 means 0.0 or 1.0); ValueError otherwise
    Returns {layer name in model.named_modules(): fraction of its weight that is zero} for every
    nn.Linear and nn.Conv2d.
    """
    # TODO: check amount
    # TODO: give each nn.Linear / nn.Conv2d a 0/1 mask (a buffer) and a way to apply it before every
    #       forward pass (the weight the forward uses = the trained weight * mask)
    # TODO: rank |w| of the weights still alive, all layers together; zero the mask of the smallest
    # TODO: return the sparsity of each layer's weight
    raise NotImplementedError("prune_global is not written yet: see the TODOs in this file")


def prune_channels(module, amount) -> None:
    """Zero the round(amount * out) output channels (rows of the weight, dim 0) of one nn.Linear or
    nn.Conv2d with the smallest L2 norm, and keep them at zero through training."""
    # TODO: check amount; one L2 norm per output channel; zero the mask rows of the smallest
    raise NotImplementedError("prune_channels is not written yet: see the TODOs in this file")


def make_permanent(model) -> None:
    """Turn every pruned module's weight into a plain nn.Parameter holding the zeros, with no mask or
    hook left behind; the model's outputs must not change."""
    # TODO: for each pruned module: weight = trained weight * mask as an nn.Parameter; remove the mask,
    #       the hook and anything else the pruning added; leave modules that were never pruned alone
    raise NotImplementedError("make_permanent is not written yet: see the TODOs in this file")
