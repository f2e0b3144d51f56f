# quizapp: exercise=magnitude_pruning
# expect: fail global-count biases-kept linear-and-conv-only second-call-among-survivors
# expect: fail survivors-train: "this follows from the check \"Biases are never pruned"
"""BUGGY (prunes_biases_and_norms): as a pruning callback that prunes every module's "weight" and "bias"
does, the biases and the BatchNorm/LayerNorm parameters are ranked and masked with the weights."""

import numbers

import torch.nn.utils.prune as prune
from torch import nn


def _fraction(amount) -> float:
    if not isinstance(amount, numbers.Real) or not 0 <= amount <= 1:
        raise ValueError(f"amount must be a fraction in [0, 1], got {amount!r}")
    return float(amount)


def _targets(model) -> list:
    # every leaf module's weight and bias, whatever the module: norm layers and biases included
    return [(m, attr) for m in model.modules() if not list(m.children())
            for attr in ("weight", "bias") if getattr(m, attr, None) is not None]


def prune_global(model, amount) -> dict[str, float]:
    amount = _fraction(amount)
    targets = _targets(model)
    # rank what the next forward pass uses: the trained tensor times the mask of an earlier call
    scores = {(m, a): getattr(m, a + "_orig") * getattr(m, a + "_mask") for m, a in targets
              if hasattr(m, a + "_mask")}
    prune.global_unstructured(targets, pruning_method=prune.L1Unstructured, amount=amount,
                              importance_scores=scores)
    return {name: float((m.weight == 0).float().mean()) for name, m in model.named_modules()
            if isinstance(m, (nn.Linear, nn.Conv2d))}


def prune_channels(module, amount) -> None:
    prune.ln_structured(module, "weight", _fraction(amount), n=2, dim=0)


def make_permanent(model) -> None:
    for module in model.modules():
        for attr in ("weight", "bias"):
            if hasattr(module, attr + "_mask"):
                prune.remove(module, attr)
