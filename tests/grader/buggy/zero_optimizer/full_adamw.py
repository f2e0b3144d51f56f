# quizapp: exercise=zero_optimizer
# expect: fail own-optimizer: "over 5 of the 5 full parameters"
# expect: fail memory-bound state-size
"""BUGGY (full_adamw): averages the gradients and steps a torch.optim.AdamW over all the parameters on
every rank: the right parameters, and the whole optimizer state on every rank, which is plain data
parallelism, not ZeRO."""

import torch
import torch.distributed as dist


class ShardedAdamW:
    def __init__(self, params, *, rank, world_size, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0.01, group=None):
        self.params = list(params)
        self.world_size, self.group = world_size, group
        self.adamw = torch.optim.AdamW(self.params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    @torch.no_grad()
    def step(self) -> None:
        for p in self.params:
            if p.grad is not None:
                dist.all_reduce(p.grad, group=self.group)
                p.grad.div_(self.world_size)
        self.adamw.step()

    def zero_grad(self, set_to_none=True) -> None:
        self.adamw.zero_grad(set_to_none=set_to_none)

    def state_numel(self) -> int:
        return sum(t.numel() for s in self.adamw.state.values() for k, t in s.items() if k != "step")
