# quizapp: exercise=tensor_parallel
# expect: fail weight-gradients: "1/2 of the expected" "fc2.bias / 2"
# expect: fail process-group
"""BUGGY (bias_divided_by_world_size): "fixes" the bias counted on every rank by adding fc2.bias / 2 to
each rank's partial output before the sum. The output is right, but each rank's copy of the bias now
gets 1/world_size of its gradient, and the ranks' copies would have to be summed to train it."""

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
        self.world_size, self.group = world_size, group

    def forward(self, x):
        x = CopyToParallel.apply(x, self.group)
        h = F.gelu(F.linear(x, self.fc1.weight, self.fc1.bias))
        bias = None if self.fc2.bias is None else self.fc2.bias / self.world_size
        return ReduceFromParallel.apply(F.linear(h, self.fc2.weight, bias), self.group)


def shard_mlp(fc1: nn.Linear, fc2: nn.Linear, *, rank: int, world_size: int, group=None) -> nn.Module:
    if fc1.out_features % world_size:
        raise ValueError("h must be divisible by world_size")
    return ParallelMLP(fc1, fc2, rank, world_size, group)
