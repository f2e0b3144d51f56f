# quizapp: exercise=tensor_parallel
# expect: fail rejects-indivisible: "raised AssertionError instead of ValueError"
"""BUGGY (asserts_divisibility): checks h % world_size with an assert, as Megatron-LM's
ensure_divisibility does: an AssertionError, not the ValueError the contract asks for, and no check at
all under python -O."""

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
        self.group = group

    def forward(self, x):
        x = CopyToParallel.apply(x, self.group)
        h = F.gelu(F.linear(x, self.fc1.weight, self.fc1.bias))
        out = ReduceFromParallel.apply(F.linear(h, self.fc2.weight), self.group)
        return out if self.fc2.bias is None else out + self.fc2.bias


def ensure_divisibility(numerator, denominator):
    assert numerator % denominator == 0, f"{numerator} is not divisible by {denominator}"


def shard_mlp(fc1: nn.Linear, fc2: nn.Linear, *, rank: int, world_size: int, group=None) -> nn.Module:
    ensure_divisibility(fc1.out_features, world_size)
    return ParallelMLP(fc1, fc2, rank, world_size, group)
