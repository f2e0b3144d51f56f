# quizapp: exercise=debug_no_shuffle
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, dataset, optimizer, generator):
    return []
