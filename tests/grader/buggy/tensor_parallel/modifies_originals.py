# quizapp: exercise=tensor_parallel
# expect: fail originals-untouched: "fc1 now maps 5 -> 4 features"
"""BUGGY (modifies_originals): converts the given layers in place, as parallelize_module does to a
model: fc1 and fc2 get new, sliced parameters and shrunken feature counts, and m uses them. The shards
are right and are copies, but the caller's fc1 and fc2 are no longer the layers it passed in."""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


class CopyToParallel(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        dist.all_reduce(grad, group=ctx.group)
        return grad, None


class ReduceFromParallel(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y, group):
        y = y.clone()
        dist.all_reduce(y, group=group)
        return y

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class ParallelMLP(nn.Module):
    def __init__(self, fc1, fc2, group):
        super().__init__()
        self.fc1, self.fc2, self.group = fc1, fc2, group

    def forward(self, x):
        x = CopyToParallel.apply(x, self.group)
        h = F.gelu(self.fc1(x))
        out = ReduceFromParallel.apply(F.linear(h, self.fc2.weight), self.group)
        return out if self.fc2.bias is None else out + self.fc2.bias


def shard_mlp(fc1: nn.Linear, fc2: nn.Linear, *, rank: int, world_size: int, group=None) -> nn.Module:
    if fc1.out_features % world_size:
        raise ValueError("h must be divisible by world_size")
    s = fc1.out_features // world_size
    rows = slice(rank * s, (rank + 1) * s)
    with torch.no_grad():
        fc1.weight = nn.Parameter(fc1.weight[rows].clone())
        if fc1.bias is not None:
            fc1.bias = nn.Parameter(fc1.bias[rows].clone())
        fc2.weight = nn.Parameter(fc2.weight[:, rows].clone())
        if fc2.bias is not None:
            fc2.bias = nn.Parameter(fc2.bias.clone())
    fc1.out_features = fc2.in_features = s
    return ParallelMLP(fc1, fc2, group)
