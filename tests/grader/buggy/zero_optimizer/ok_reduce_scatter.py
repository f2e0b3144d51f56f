# quizapp: exercise=zero_optimizer
# expect: pass
"""Right, the flat way: the gradients packed into one padded flat vector (zeros where a gradient is
None) and reduce-scattered, so each rank receives the sum of only its own range; AdamW on the flat
range, piece by piece so that each parameter keeps its own step count; then one all-gather of the
padded ranges. The flat buffers live only inside step()."""

import math

import torch
import torch.distributed as dist


class ShardedAdamW:
    def __init__(self, params, *, rank, world_size, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0.01, group=None):
        self.params = list(params)
        self.rank, self.world, self.group = rank, world_size, group
        self.hyper = (lr, betas, eps, weight_decay)
        self.n = sum(p.numel() for p in self.params)
        self.size = -(-self.n // world_size)
        self.start, self.end = min(rank * self.size, self.n), min((rank + 1) * self.size, self.n)
        self.exp_avg = self.params[0].new_zeros(self.end - self.start)
        self.exp_avg_sq = self.params[0].new_zeros(self.end - self.start)
        self.steps = [0] * len(self.params)

    @torch.no_grad()
    def step(self) -> None:
        lr, (b1, b2), eps, wd = self.hyper
        flat = self.params[0].new_zeros(self.size * self.world)
        offset = 0
        for p in self.params:
            if p.grad is not None:
                flat[offset:offset + p.numel()] = p.grad.reshape(-1)
            offset += p.numel()
        mine = self.params[0].new_empty(self.size)
        dist.reduce_scatter_single(mine, flat, group=self.group)
        mine /= self.world
        values = torch.cat([p.detach().reshape(-1) for p in self.params])
        values = torch.cat([values, values.new_zeros(self.size * self.world - self.n)])
        own = values[self.rank * self.size:(self.rank + 1) * self.size]
        offset = 0
        for i, p in enumerate(self.params):
            lo, hi = max(self.start, offset), min(self.end, offset + p.numel())
            offset += p.numel()
            if lo >= hi or p.grad is None:
                continue
            self.steps[i] += 1
            t = self.steps[i]
            a, b = lo - self.start, hi - self.start
            x, g = own[a:b], mine[a:b]
            m, v = self.exp_avg[a:b], self.exp_avg_sq[a:b]
            x.mul_(1 - lr * wd)
            m.mul_(b1).add_(g, alpha=1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            x.addcdiv_(m, (v.sqrt() / math.sqrt(1 - b2 ** t)).add_(eps), value=-lr / (1 - b1 ** t))
        gathered = torch.empty_like(values)
        dist.all_gather_single(gathered, own.clone(), group=self.group)
        offset = 0
        for p in self.params:
            p.view(-1).copy_(gathered[offset:offset + p.numel()])
            offset += p.numel()

    def zero_grad(self, set_to_none=True) -> None:
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def state_numel(self) -> int:
        return self.exp_avg.numel() + self.exp_avg_sq.numel()
