# quizapp: exercise=debug_next_token_shift
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer):
    return []
