# quizapp: exercise=debug_ddp_sync_flag
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer, accum_steps):
    return []
