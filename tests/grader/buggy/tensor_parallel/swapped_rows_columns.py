# quizapp: exercise=tensor_parallel
# expect: fail shard-slices: "that is fc1.weight[:, 0:4]" "transpose of the paper's A"
# expect: error forward-output forward-communication weight-gradients input-gradient backward-communication
# expect: error process-group
# expect: skip originals-untouched
"""BUGGY (swapped_rows_columns): follows the paper's Y = GELU(XA) B literally, splitting A by columns and
B by rows, but on nn.Linear's weights, which are A and B transposed: it takes fc1.weight[:, rows] and
fc2.weight[rows, :], the other dimension of each, and the forward cannot even multiply."""

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
        cols = slice(rank * s, (rank + 1) * s)
        self.fc1 = Layer(fc1.weight[:, cols], None if fc1.bias is None else fc1.bias[cols])  # "A by columns"
        self.fc2 = Layer(fc2.weight[cols, :], fc2.bias)  # "B by rows"
        self.group = group

    def forward(self, x):
        x = CopyToParallel.apply(x, self.group)
        h = F.gelu(F.linear(x, self.fc1.weight, self.fc1.bias))
        out = ReduceFromParallel.apply(F.linear(h, self.fc2.weight), self.group)
        return out if self.fc2.bias is None else out + self.fc2.bias


def shard_mlp(fc1: nn.Linear, fc2: nn.Linear, *, rank: int, world_size: int, group=None) -> nn.Module:
    if fc1.out_features % world_size:
        raise ValueError("h must be divisible by world_size")
    return ParallelMLP(fc1, fc2, rank, world_size, group)
