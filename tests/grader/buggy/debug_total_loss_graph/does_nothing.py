# quizapp: exercise=debug_total_loss_graph
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer, val_batch, log=None):
    return []
