# quizapp: exercise=magnitude_pruning
# expect: fail amount-fraction global-count returns-sparsity second-call-among-survivors channels-l2
# expect: skip global-ranking biases-kept linear-and-conv-only stays-zero-new-optimizer stays-zero-optimizer-state
# expect: skip survivors-train channels-stay-zero permanent-plain-parameter permanent-same-outputs
"""Does nothing: prunes nothing and reports no sparsity."""


def prune_global(model, amount) -> dict[str, float]:
    return {}


def prune_channels(module, amount) -> None:
    return None


def make_permanent(model) -> None:
    return None
