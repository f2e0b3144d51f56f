# quizapp: exercise=tensor_parallel
# expect: fail weight-gradients: "2.0x the expected" "functional collectives"
# expect: fail input-gradient: "2.0x the expected"
# expect: fail backward-communication: "2 all-reduces"
# expect: fail process-group
"""BUGGY (functional_collective_g): g is the functional collectives' all_reduce, the one torch.compile
traces. It is differentiable, with an all-reduce as its backward, so used as g it sums the output's
gradient over the ranks again and every gradient comes out world_size times too large."""

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
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
        self.group = group if group is not None else dist.group.WORLD

    def forward(self, x):
        x = CopyToParallel.apply(x, self.group)
        h = F.gelu(F.linear(x, self.fc1.weight, self.fc1.bias))
        out = funcol.wait_tensor(funcol.all_reduce(F.linear(h, self.fc2.weight), "sum", self.group))
        return out if self.fc2.bias is None else out + self.fc2.bias


def shard_mlp(fc1: nn.Linear, fc2: nn.Linear, *, rank: int, world_size: int, group=None) -> nn.Module:
    if fc1.out_features % world_size:
        raise ValueError("h must be divisible by world_size")
    return ParallelMLP(fc1, fc2, rank, world_size, group)
