# quizapp: exercise=debug_no_shuffle
# expect: fail honest-fix matches-fixed-run
# expect: skip batches-mix-classes
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, dataset, optimizer, generator):
    return []
