# quizapp: exercise=debug_sqrt_zero
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer):
    return []
