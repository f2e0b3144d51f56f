# quizapp: exercise=tensor_parallel
# expect: error shard-slices shards-are-copies rejects-indivisible forward-output forward-communication
# expect: error weight-gradients input-gradient backward-communication originals-untouched process-group
# expect: says shard-slices: "aborted (SIGABRT)" "some ranks only"
"""BUGGY (backward_all_reduce_on_rank_0): f's backward all-reduces x's gradient on rank 0 only. The other
rank's next collective then meets rank 0's all-reduce with another size, and gloo aborts the process:
the grade must say what that abort means, not only which signal it was."""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


class CopyToParallel(torch.autograd.Function):
    """Megatron's f: identity forward; backward sums x's gradient over the group, since every rank's
    fc1 shard sees all of x but contributes only its hidden units' part of the gradient."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous().clone()  # all_reduce works in place: never on autograd's own buffer
        if dist.get_rank() == 0:
            dist.all_reduce(grad, op=dist.ReduceOp.SUM, group=ctx.group)
        return grad, None


class ReduceFromParallel(torch.autograd.Function):
    """Megatron's g: forward sums the partial outputs over the group; backward is the identity, since
    every rank already holds the gradient of the whole output."""

    @staticmethod
    def forward(ctx, partial, group):
        total = partial.clone()
        dist.all_reduce(total, op=dist.ReduceOp.SUM, group=group)
        return total

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class Shard(nn.Module):
    """One layer's slice on this rank: a copy, so that training it never writes into the original."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None):
        super().__init__()
        self.weight = nn.Parameter(weight.detach().clone())
        self.bias = None if bias is None else nn.Parameter(bias.detach().clone())


class TensorParallelMLP(nn.Module):
    def __init__(self, fc1: nn.Linear, fc2: nn.Linear, rank: int, world_size: int, group):
        super().__init__()
        s = fc1.out_features // world_size
        rows = slice(rank * s, (rank + 1) * s)
        # Column-parallel fc1: this rank's hidden units are rows of fc1.weight (out_features first).
        self.fc1 = Shard(fc1.weight[rows], None if fc1.bias is None else fc1.bias[rows])
        # Row-parallel fc2: the same hidden units are columns of fc2.weight; the bias stays whole.
        self.fc2 = Shard(fc2.weight[:, rows], fc2.bias)
        self.group = group

    def forward(self, x):
        x = CopyToParallel.apply(x, self.group)
        hidden = F.gelu(F.linear(x, self.fc1.weight, self.fc1.bias))  # only this rank's units: no exchange
        out = ReduceFromParallel.apply(F.linear(hidden, self.fc2.weight), self.group)
        # Added once, after the sum: on each partial it would be counted world_size times.
        return out if self.fc2.bias is None else out + self.fc2.bias


def shard_mlp(fc1: nn.Linear, fc2: nn.Linear, *, rank: int, world_size: int, group=None) -> nn.Module:
    h = fc1.out_features
    if h % world_size:
        raise ValueError(f"fc1.out_features = {h} hidden units cannot be split evenly over {world_size} ranks")
    return TensorParallelMLP(fc1, fc2, rank, world_size, group)
