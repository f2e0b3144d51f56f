# quizapp: exercise=debug_total_loss_graph
# expect: fail honest-fix matches-fixed-run
# expect: skip memory-stays-flat
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer, val_batch, log=None):
    return []
