# quizapp: exercise=debug_eval_mode
# expect: fail honest-fix matches-fixed-run
# expect: skip validates-in-eval-mode
"""Does nothing: training and validation return at once: no forward pass, no step."""


def train_and_validate(model, train_batches, val_batches, optimizer, epochs=5):
    return []
