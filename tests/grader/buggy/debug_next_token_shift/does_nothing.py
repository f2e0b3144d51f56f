# quizapp: exercise=debug_next_token_shift
# expect: fail honest-fix matches-fixed-run
# expect: skip predicts-next-token
"""Does nothing: the training function returns at once: no forward pass, no step."""


def train(model, batches, optimizer):
    return []
