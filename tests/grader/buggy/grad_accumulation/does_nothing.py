# quizapp: exercise=grad_accumulation
"""Does nothing: takes no step and says so."""


def train_with_accumulation(model, loader, optimizer, loss_fn, accum_steps, *, max_grad_norm=None) -> int:
    return 0
