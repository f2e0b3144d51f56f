# quizapp: exercise=debug_accum_not_divided
# expect: fail honest-fix matches-fixed-run
# expect: skip loss-does-not-explode
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer, accum_steps):
    return []
