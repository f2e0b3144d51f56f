# quizapp: exercise=magnitude_pruning
# expect: pass
"""Right, with torch.nn.utils.prune itself: global_unstructured with L1Unstructured, ln_structured, and
prune.remove for the modules that carry a mask. A second call passes importance_scores: left to itself,
global_unstructured ranks module.weight, which only a forward pass recomputes."""

import numbers

import torch.nn.utils.prune as prune
from torch import nn


def _fraction(amount) -> float:
    if not isinstance(amount, numbers.Real) or not 0 <= amount <= 1:
        raise ValueError(f"amount must be a fraction in [0, 1], got {amount!r}")
    return float(amount)  # torch reads an int as a count of weights


def prune_global(model, amount) -> dict[str, float]:
    amount = _fraction(amount)
    layers = [(name, m) for name, m in model.named_modules() if isinstance(m, (nn.Linear, nn.Conv2d))]
    # the values the next forward pass will use, even when no forward ran since the last optimizer step
    scores = {(m, "weight"): m.weight_orig * m.weight_mask for _, m in layers if hasattr(m, "weight_mask")}
    prune.global_unstructured([(m, "weight") for _, m in layers], pruning_method=prune.L1Unstructured,
                              amount=amount, importance_scores=scores)
    return {name: float((m.weight == 0).float().mean()) for name, m in layers}


def prune_channels(module, amount) -> None:
    prune.ln_structured(module, "weight", _fraction(amount), n=2, dim=0)


def make_permanent(model) -> None:
    for module in model.modules():
        if hasattr(module, "weight_mask"):
            prune.remove(module, "weight")
