# quizapp: exercise=magnitude_pruning
# expect: fail amount-fraction: "prune_global(model, 2): expected ValueError"
# expect: says amount-fraction: "it zeroed 2 weights: an int is never a count here"
"""BUGGY (int_amount_as_count): amount goes to torch.nn.utils.prune as it came, so an int 1 prunes one
weight and an int 2 two, where the contract reads 1 as 1.0 and refuses 2."""

import torch.nn.utils.prune as prune
from torch import nn


def _fraction(amount):
    return amount  # torch validates it (and reads an int as a count of weights)


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
