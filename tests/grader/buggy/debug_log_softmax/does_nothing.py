# quizapp: exercise=debug_log_softmax
# expect: fail honest-fix matches-fixed-run
# expect: skip loss-finite
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer):
    return []
