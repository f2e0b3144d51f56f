# quizapp: exercise=magnitude_pruning
# expect: fail second-call-among-survivors: "then prune_global(model, 0.5) with no forward pass after the last step: it zeroed 41 weights that are not among the 658 of smallest current |w| of the 1317 alive"
# expect: says second-call-among-survivors: "you ranked the weights of the last forward pass, from before the last optimizer step"
# expect: says second-call-among-survivors: "importance_scores"
"""BUGGY (ranks_stale_weight): torch.nn.utils.prune.global_unstructured as it comes; on a second call it
ranks module.weight, which only a forward pass recomputes, so after an optimizer step with no forward
since, it ranks the values from before that step."""

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
    prune.global_unstructured([(m, "weight") for _, m in layers], pruning_method=prune.L1Unstructured,
                              amount=amount)
    return {name: float((m.weight == 0).float().mean()) for name, m in layers}


def prune_channels(module, amount) -> None:
    prune.ln_structured(module, "weight", _fraction(amount), n=2, dim=0)


def make_permanent(model) -> None:
    for module in model.modules():
        if hasattr(module, "weight_mask"):
            prune.remove(module, "weight")
