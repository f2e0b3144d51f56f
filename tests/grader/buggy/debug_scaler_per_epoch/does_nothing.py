# quizapp: exercise=debug_scaler_per_epoch
# expect: fail honest-fix matches-fixed-run
# expect: skip no-steps-skipped-again
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer, log=None):
    return []
