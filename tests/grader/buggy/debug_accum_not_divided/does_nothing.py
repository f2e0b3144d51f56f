# quizapp: exercise=debug_accum_not_divided
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer, accum_steps):
    return []
