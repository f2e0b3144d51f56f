# quizapp: exercise=debug_zero_grad_missing
# expect: fail honest-fix matches-fixed-run
# expect: skip fresh-gradient-each-step
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer):
    return []
