# quizapp: exercise=tensor_parallel
# expect: fail forward-output: "the all-reduce came before the row-parallel matmul"
# expect: fail weight-gradients process-group
"""BUGGY (all_reduce_before_row_matmul): the all-reduce sits between GELU and the fc2 shard, so it sums
the ranks' hidden activations, which are different hidden units, and each rank's fc2 shard then
multiplies that sum. One all-reduce per forward, as required, in the wrong place."""

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
        x = CopyToParallel.apply(x, self.group)
        h = F.gelu(F.linear(x, self.fc1.weight, self.fc1.bias))
        dist.all_reduce(h, group=self.group)  # "combine the ranks' work" one matmul too early
        out = F.linear(h, self.fc2.weight)
        return out if self.fc2.bias is None else out + self.fc2.bias


def shard_mlp(fc1: nn.Linear, fc2: nn.Linear, *, rank: int, world_size: int, group=None) -> nn.Module:
    if fc1.out_features % world_size:
        raise ValueError("h must be divisible by world_size")
    return ParallelMLP(fc1, fc2, rank, world_size, group)
