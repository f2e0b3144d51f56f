# quizapp: exercise=zero_optimizer
# expect: pass
"""Right, with torch.optim.AdamW doing the math: one new tensor per owned piece, each a parameter of an
inner AdamW (so each keeps its own step count, and a piece whose parameter has no gradient is skipped
by AdamW itself); gradients averaged by a per-parameter all-reduce and handed to the pieces as views;
each owner's range sent to every rank by broadcast, with group_src (the owner's rank in the group)."""

import torch
import torch.distributed as dist


class ShardedAdamW:
    def __init__(self, params, *, rank, world_size, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0.01, group=None):
        self.params = list(params)
        self.rank, self.world_size, self.group = rank, world_size, group
        n = sum(p.numel() for p in self.params)
        self.chunk = -(-n // world_size)
        self.ranges = [(min(r * self.chunk, n), min((r + 1) * self.chunk, n)) for r in range(world_size)]
        self.pieces = []  # (parameter index, first, end, the piece) for this rank's elements
        offset = 0
        start, end = self.ranges[rank]
        for i, p in enumerate(self.params):
            lo, hi = max(start, offset), min(end, offset + p.numel())
            if lo < hi:
                piece = p.detach().reshape(-1)[lo - offset:hi - offset].clone()
                self.pieces.append((i, lo - offset, hi - offset, piece))
            offset += p.numel()
        self.inner = torch.optim.AdamW([piece for *_, piece in self.pieces] or [torch.zeros(1)], lr=lr,
                                       betas=betas, eps=eps, weight_decay=weight_decay, foreach=False)
        for *_, piece in self.pieces:  # the moments exist from the start
            self.inner.state[piece]["step"] = torch.tensor(0.0)
            self.inner.state[piece]["exp_avg"] = torch.zeros_like(piece)
            self.inner.state[piece]["exp_avg_sq"] = torch.zeros_like(piece)

    @torch.no_grad()
    def step(self) -> None:
        for p in self.params:
            if p.grad is not None:
                dist.all_reduce(p.grad, group=self.group)
                p.grad.div_(self.world_size)
        for i, lo, hi, piece in self.pieces:
            g = self.params[i].grad
            piece.grad = None if g is None else g.reshape(-1)[lo:hi]
        self.inner.step()
        for i, lo, hi, piece in self.pieces:
            piece.grad = None
            self.params[i].view(-1)[lo:hi].copy_(piece)
        flat_views = []
        offset = 0
        for p in self.params:
            flat_views.append((offset, p.view(-1)))
            offset += p.numel()
        for owner, (start, end) in enumerate(self.ranges):
            if start == end:
                continue
            buf = torch.cat([v[max(start, o) - o:min(end, o + v.numel()) - o] for o, v in flat_views
                             if max(start, o) < min(end, o + v.numel())])
            dist.broadcast(buf, group=self.group, group_src=owner)
            for o, v in flat_views:
                lo, hi = max(start, o), min(end, o + v.numel())
                if lo < hi:
                    v[lo - o:hi - o].copy_(buf[lo - start:hi - start])

    def zero_grad(self, set_to_none=True) -> None:
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def state_numel(self) -> int:
        return sum(s[k].numel() for s in self.inner.state.values() for k in ("exp_avg", "exp_avg_sq") if k in s)
