# quizapp: exercise=debug_sqrt_zero
# expect: fail honest-fix matches-fixed-run
# expect: skip gradients-finite
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer):
    return []
