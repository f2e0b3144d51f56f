# quizapp: exercise=tensor_parallel
# expect: fail input-gradient: "only rank 0's own share" "never all-reduced"
# expect: fail backward-communication: "issued no collective"
# expect: fail process-group
"""BUGGY (no_f_backward): f is left out: x goes straight into the fc1 shard, so each rank's x.grad
holds only its own hidden units' part of the gradient. The forward and the shards' gradients are right."""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


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
        h = F.gelu(F.linear(x, self.fc1.weight, self.fc1.bias))
        out = ReduceFromParallel.apply(F.linear(h, self.fc2.weight), self.group)
        return out if self.fc2.bias is None else out + self.fc2.bias


def shard_mlp(fc1: nn.Linear, fc2: nn.Linear, *, rank: int, world_size: int, group=None) -> nn.Module:
    if fc1.out_features % world_size:
        raise ValueError("h must be divisible by world_size")
    return ParallelMLP(fc1, fc2, rank, world_size, group)
