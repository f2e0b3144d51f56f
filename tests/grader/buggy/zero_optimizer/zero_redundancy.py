# quizapp: exercise=zero_optimizer
# expect: fail own-optimizer: "ZeroRedundancyOptimizer"
# expect: may-not-pass state-size memory-bound
"""BUGGY (zero_redundancy): averages the gradients, then hands the rest to
torch.distributed.optim.ZeroRedundancyOptimizer over an AdamW: the library's ZeRO-1, which shards by
whole parameters rather than by the contract's element ranges, and is what the exercise asks to write."""

import torch
import torch.distributed as dist
from torch.distributed.optim import ZeroRedundancyOptimizer


class ShardedAdamW:
    def __init__(self, params, *, rank, world_size, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0.01, group=None):
        self.params = list(params)
        self.world_size, self.group = world_size, group
        self.zero = ZeroRedundancyOptimizer(self.params, optimizer_class=torch.optim.AdamW, process_group=group,
                                            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=False)

    @torch.no_grad()
    def step(self) -> None:
        for p in self.params:
            if p.grad is not None:
                dist.all_reduce(p.grad, group=self.group)
                p.grad.div_(self.world_size)
        self.zero.step()

    def zero_grad(self, set_to_none=True) -> None:
        self.zero.zero_grad(set_to_none=set_to_none)

    def state_numel(self) -> int:
        return sum(t.numel() for s in self.zero.optim.state.values() for k, t in s.items() if k != "step")
