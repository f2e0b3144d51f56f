# quizapp: exercise=early_stopping
"""Does nothing: never improves, never stops, never saves or restores a state."""


class EarlyStopping:
    def __init__(self, patience=5, min_delta=0.0, mode="min", restore_best=True):
        pass

    def step(self, metric, model) -> bool:
        return False
