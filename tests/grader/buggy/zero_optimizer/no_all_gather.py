# quizapp: exercise=zero_optimizer
# expect: fail ranks-identical: "differ from rank 0's"
# expect: fail process-group
"""BUGGY (no_all_gather): averages and updates its own range, and never sends it: each rank ends the step
with its own elements updated and everyone else's as they were."""

import math

import torch
import torch.distributed as dist


class ShardedAdamW:
    def __init__(self, params, *, rank, world_size, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0.01, group=None):
        self.params = list(params)  # read a generator once
        self.rank, self.world_size, self.group = rank, world_size, group
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        n = sum(p.numel() for p in self.params)
        self.chunk = -(-n // world_size)  # S = ceil(N / world_size)
        self.start, self.end = min(rank * self.chunk, n), min((rank + 1) * self.chunk, n)
        # This rank's pieces: (parameter index, first, end) of the elements it owns inside each parameter.
        self.pieces = []
        offset = 0
        for i, p in enumerate(self.params):
            lo, hi = max(self.start, offset), min(self.end, offset + p.numel())
            if lo < hi:
                self.pieces.append((i, lo - offset, hi - offset))
            offset += p.numel()
        self.state = {i: {"step": 0, "exp_avg": self.params[i].new_zeros(hi - lo),
                          "exp_avg_sq": self.params[i].new_zeros(hi - lo)} for i, lo, hi in self.pieces}

    @torch.no_grad()
    def step(self) -> None:
        # (1) average every gradient over the group
        for p in self.params:
            if p.grad is not None:
                dist.all_reduce(p.grad, group=self.group)
                p.grad.div_(self.world_size)
        # (2) AdamW on the owned elements, each parameter with its own step count
        beta1, beta2 = self.betas
        for i, lo, hi in self.pieces:
            p = self.params[i]
            if p.grad is None:
                continue
            s = self.state[i]
            s["step"] += 1
            t = s["step"]
            x, g = p.view(-1)[lo:hi], p.grad.reshape(-1)[lo:hi]
            x.mul_(1 - self.lr * self.weight_decay)
            s["exp_avg"].lerp_(g, 1 - beta1)
            s["exp_avg_sq"].mul_(beta2).addcmul_(g, g, value=1 - beta2)
            denom = (s["exp_avg_sq"].sqrt() / math.sqrt(1 - beta2 ** t)).add_(self.eps)
            x.addcdiv_(s["exp_avg"], denom, value=-self.lr / (1 - beta1 ** t))
        return
        # (3) all-gather the owned ranges, padded to S each, and write every element back
        mine = self.params[0].new_zeros(self.chunk)
        if self.pieces:
            mine[:self.end - self.start] = torch.cat([self.params[i].view(-1)[lo:hi] for i, lo, hi in self.pieces])
        full = self.params[0].new_empty(self.chunk * self.world_size)
        dist.all_gather_single(full, mine, group=self.group)
        offset = 0
        for p in self.params:
            p.view(-1).copy_(full[offset:offset + p.numel()])
            offset += p.numel()

    def zero_grad(self, set_to_none=True) -> None:
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def state_numel(self) -> int:
        return sum(s["exp_avg"].numel() + s["exp_avg_sq"].numel() for s in self.state.values())
