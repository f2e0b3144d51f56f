# quizapp: exercise=debug_ddp_sync_flag
# expect: fail honest-fix matches-fixed-run
# expect: skip ranks-agree
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer, accum_steps):
    return []
