# quizapp: exercise=grad_accumulation
# expect: fail optimizer-steps divisible-matches-big-batch trailing-group short-last-micro-batch
# expect: fail one-micro-batch-at-a-time clip-accumulated
# expect: skip returns-step-count no-zero-inside-group
"""Does nothing: takes no step and says so."""


def train_with_accumulation(model, loader, optimizer, loss_fn, accum_steps, *, max_grad_norm=None) -> int:
    return 0
