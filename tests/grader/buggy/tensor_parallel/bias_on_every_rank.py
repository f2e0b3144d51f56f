# quizapp: exercise=tensor_parallel
# expect: fail forward-output: "fc2.bias 2.0 times" "added on each of the 2 ranks"
# expect: fail process-group
"""BUGGY (bias_on_every_rank): the fc2 shard is applied with the bias, F.linear(h, w, b), on every rank,
and then the partial outputs are summed: the bias is counted world_size times."""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


class _F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        dist.all_reduce(grad, group=ctx.group)
        return grad, None


class _G(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y, group):
        y = y.clone()
        dist.all_reduce(y, group=group)
        return y

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def _linear(weight, bias):
    layer = nn.Module()
    layer.weight = nn.Parameter(weight.detach().clone())
    layer.bias = None if bias is None else nn.Parameter(bias.detach().clone())
    return layer


class ParallelMLP(nn.Module):
    def __init__(self, fc1, fc2, rank, world_size, group):
        super().__init__()
        s = fc1.out_features // world_size
        rows = slice(rank * s, (rank + 1) * s)
        self.fc1 = _linear(fc1.weight[rows], None if fc1.bias is None else fc1.bias[rows])
        self.fc2 = _linear(fc2.weight[:, rows], fc2.bias)
        self.group = group

    def forward(self, x):
        x = _F.apply(x, self.group)
        h = F.gelu(F.linear(x, self.fc1.weight, self.fc1.bias))
        return _G.apply(F.linear(h, self.fc2.weight, self.fc2.bias), self.group)


def shard_mlp(fc1: nn.Linear, fc2: nn.Linear, *, rank: int, world_size: int, group=None) -> nn.Module:
    if fc1.out_features % world_size:
        raise ValueError("h must be divisible by world_size")
    return ParallelMLP(fc1, fc2, rank, world_size, group)
