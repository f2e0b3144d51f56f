# quizapp: exercise=debug_scheduler_skipped_step
# expect: fail honest-fix matches-fixed-run
# expect: skip lr-follows-real-steps
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer, scheduler, log=None):
    return []
