# quizapp: exercise=tensor_parallel
# expect: pass
"""Right, laid out as Megatron-LM lays it out: a ColumnParallelLinear (f, then its weight rows) and a
RowParallelLinear (its weight columns, then g, its bias skipped until after the sum), with f and g as
autograd Functions whose collectives are the functional collectives, run inside the Functions where
autograd does not look."""

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.nn.functional as F
from torch import nn


def _sum(t, group):
    return funcol.wait_tensor(funcol.all_reduce(t, "sum", group))


class _CopyToRegion(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x

    @staticmethod
    def backward(ctx, grad):
        return _sum(grad, ctx.group), None


class _ReduceFromRegion(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y, group):
        return _sum(y, group)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class ColumnParallelLinear(nn.Module):
    def __init__(self, layer: nn.Linear, rank, world_size, group):
        super().__init__()
        per = layer.out_features // world_size
        self.weight = nn.Parameter(layer.weight.detach()[rank * per:(rank + 1) * per].clone())
        self.bias = None if layer.bias is None else nn.Parameter(layer.bias.detach()[rank * per:(rank + 1) * per].clone())
        self.group = group

    def forward(self, x):
        return F.linear(_CopyToRegion.apply(x, self.group), self.weight, self.bias)


class RowParallelLinear(nn.Module):
    def __init__(self, layer: nn.Linear, rank, world_size, group):
        super().__init__()
        per = layer.in_features // world_size
        self.weight = nn.Parameter(layer.weight.detach()[:, rank * per:(rank + 1) * per].clone())
        self.bias = None if layer.bias is None else nn.Parameter(layer.bias.detach().clone())
        self.group = group

    def forward(self, h):
        y = _ReduceFromRegion.apply(F.linear(h, self.weight), self.group)
        return y if self.bias is None else y + self.bias


class ParallelMLP(nn.Module):
    def __init__(self, fc1, fc2, rank, world_size, group):
        super().__init__()
        group = group if group is not None else dist.group.WORLD
        self.fc1 = ColumnParallelLinear(fc1, rank, world_size, group)
        self.fc2 = RowParallelLinear(fc2, rank, world_size, group)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


def shard_mlp(fc1: nn.Linear, fc2: nn.Linear, *, rank: int, world_size: int, group=None) -> nn.Module:
    if fc1.out_features % world_size:
        raise ValueError(f"fc1.out_features={fc1.out_features} is not divisible by world_size={world_size}")
    return ParallelMLP(fc1, fc2, rank, world_size, group)
