# quizapp: exercise=debug_zero_grad_missing
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer):
    return []
