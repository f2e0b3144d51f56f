# quizapp: exercise=debug_clip_before_unscale
# expect: fail honest-fix matches-fixed-run
# expect: skip loss-decreases
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer, log=None):
    return []
