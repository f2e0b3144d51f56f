# quizapp: exercise=zero_optimizer
# expect: fail adamw-step step-counts state-size zero-grad process-group
# expect: skip skips-none-grads ranks-identical memory-bound own-optimizer
"""Does nothing: keeps no state, steps nothing, zeroes nothing."""


class ShardedAdamW:
    def __init__(self, params, *, rank, world_size, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0.01, group=None):
        pass

    def step(self) -> None:
        pass

    def zero_grad(self, set_to_none=True) -> None:
        pass

    def state_numel(self) -> int:
        return 0
