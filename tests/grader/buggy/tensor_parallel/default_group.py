# quizapp: exercise=tensor_parallel
# expect: fail process-group: "the all-reduce ran on the default group" "over 4 ranks"
"""BUGGY (default_group): stores `group` and never passes it on: every all_reduce runs on the default
group. With one group of 2 ranks that is the same thing; in a job with data parallelism beside the
tensor parallelism, each sum adds the other replica's partial outputs too."""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


class CopyToParallel(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        dist.all_reduce(grad)
        return grad


class ReduceFromParallel(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y):
        y = y.clone()
        dist.all_reduce(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        return grad


class Layer(nn.Module):
    def __init__(self, weight, bias):
        super().__init__()
        self.weight = nn.Parameter(weight.detach().clone())
        self.bias = None if bias is None else nn.Parameter(bias.detach().clone())


class ParallelMLP(nn.Module):
    def __init__(self, fc1, fc2, rank, world_size, group):
        super().__init__()
        s = fc1.out_features // world_size
        rows = slice(rank * s, (rank + 1) * s)
        self.fc1 = Layer(fc1.weight[rows], None if fc1.bias is None else fc1.bias[rows])
        self.fc2 = Layer(fc2.weight[:, rows], fc2.bias)
        self.group = group

    def forward(self, x):
        h = F.gelu(F.linear(CopyToParallel.apply(x), self.fc1.weight, self.fc1.bias))
        out = ReduceFromParallel.apply(F.linear(h, self.fc2.weight))
        return out if self.fc2.bias is None else out + self.fc2.bias


def shard_mlp(fc1: nn.Linear, fc2: nn.Linear, *, rank: int, world_size: int, group=None) -> nn.Module:
    if fc1.out_features % world_size:
        raise ValueError("h must be divisible by world_size")
    return ParallelMLP(fc1, fc2, rank, world_size, group)
