# quizapp: exercise=debug_clip_before_unscale
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer, log=None):
    return []
