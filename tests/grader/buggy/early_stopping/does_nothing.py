# quizapp: exercise=early_stopping
# expect: fail patience min-delta mode-max best-and-epoch non-finite defaults validation
# expect: skip restore copy-of-state buffers restore-best-false
"""Does nothing: never improves, never stops, never saves or restores a state."""


class EarlyStopping:
    def __init__(self, patience=5, min_delta=0.0, mode="min", restore_best=True):
        pass

    def step(self, metric, model) -> bool:
        return False
