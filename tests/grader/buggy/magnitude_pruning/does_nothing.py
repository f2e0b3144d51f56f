# quizapp: exercise=magnitude_pruning
"""Does nothing: prunes nothing and reports no sparsity."""


def prune_global(model, amount) -> dict[str, float]:
    return {}


def prune_channels(module, amount) -> None:
    return None


def make_permanent(model) -> None:
    return None
