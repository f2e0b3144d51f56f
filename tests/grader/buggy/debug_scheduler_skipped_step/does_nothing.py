# quizapp: exercise=debug_scheduler_skipped_step
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer, scheduler, log=None):
    return []
