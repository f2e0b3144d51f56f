# quizapp: exercise=debug_half_adam_eps
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer, log=None):
    return []
