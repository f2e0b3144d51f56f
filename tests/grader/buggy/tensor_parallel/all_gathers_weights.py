# quizapp: exercise=tensor_parallel
# expect: fail forward-communication: "3 all-gathers (of 40, 48 and 8 elements)" "gathering full weights"
# expect: fail backward-communication: "issued no collective"
"""BUGGY (all_gathers_weights): holds the right shards, but every forward all-gathers them back into
the full fc1 and fc2 weights and runs the whole MLP on every rank (FSDP's way, not tensor parallelism):
the results are right, at the price of moving and holding every weight on every rank, every step."""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


class Layer(nn.Module):
    def __init__(self, weight, bias):
        super().__init__()
        self.weight = nn.Parameter(weight.detach().clone())
        self.bias = None if bias is None else nn.Parameter(bias.detach().clone())


class GatheredMLP(nn.Module):
    def __init__(self, fc1, fc2, rank, world_size, group):
        super().__init__()
        s = fc1.out_features // world_size
        rows = slice(rank * s, (rank + 1) * s)
        self.fc1 = Layer(fc1.weight[rows], None if fc1.bias is None else fc1.bias[rows])
        self.fc2 = Layer(fc2.weight[:, rows], fc2.bias)
        self.rank, self.world_size, self.group = rank, world_size, group

    def gather(self, shard, dim):
        pieces = [torch.empty_like(shard) for _ in range(self.world_size)]
        dist.all_gather(pieces, shard.detach().contiguous(), group=self.group)
        pieces[self.rank] = shard  # this rank's own piece stays in the graph, so it gets its gradient
        return torch.cat(pieces, dim=dim)

    def forward(self, x):
        w1 = self.gather(self.fc1.weight, 0)
        w2 = self.gather(self.fc2.weight.t(), 0).t()
        b1 = None if self.fc1.bias is None else self.gather(self.fc1.bias, 0)
        return F.linear(F.gelu(F.linear(x, w1, b1)), w2, self.fc2.bias)


def shard_mlp(fc1: nn.Linear, fc2: nn.Linear, *, rank: int, world_size: int, group=None) -> nn.Module:
    if fc1.out_features % world_size:
        raise ValueError("h must be divisible by world_size")
    return GatheredMLP(fc1, fc2, rank, world_size, group)
