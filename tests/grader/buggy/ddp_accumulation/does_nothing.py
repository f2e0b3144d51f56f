# quizapp: exercise=ddp_accumulation
# expect: fail optimizer-steps divisible-matches-single-process trailing-group short-last-micro-batch clip-accumulated
# expect: skip returns-step-count ranks-identical no-zero-inside-group one-all-reduce-per-group no-sync-until-last
"""Does nothing: takes no step and says so."""


def train_ddp_accumulation(model, loader, optimizer, loss_fn, accum_steps, *, max_grad_norm=None) -> int:
    return 0
