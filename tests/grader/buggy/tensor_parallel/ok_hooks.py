# quizapp: exercise=tensor_parallel
# expect: pass
"""Right, without autograd Functions: f is a gradient hook on a view of x that all-reduces x's
gradient, and g is a plain in-place dist.all_reduce, which autograd does not see (identity backward)."""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


class TPMLP(nn.Module):
    def __init__(self, fc1, fc2, rank, world_size, group):
        super().__init__()
        s = fc1.out_features // world_size
        lo, hi = rank * s, (rank + 1) * s
        self.fc1 = nn.Linear(fc1.in_features, s, bias=fc1.bias is not None,
                             device=fc1.weight.device, dtype=fc1.weight.dtype)
        self.fc2 = nn.Linear(s, fc2.out_features, bias=fc2.bias is not None,
                             device=fc2.weight.device, dtype=fc2.weight.dtype)
        with torch.no_grad():
            self.fc1.weight.copy_(fc1.weight[lo:hi])
            self.fc2.weight.copy_(fc2.weight[:, lo:hi])
            if fc1.bias is not None:
                self.fc1.bias.copy_(fc1.bias[lo:hi])
            if fc2.bias is not None:
                self.fc2.bias.copy_(fc2.bias)
        self.group = group

    def _sum_grad(self, grad):
        grad = grad.clone()
        dist.all_reduce(grad, group=self.group)
        return grad

    def forward(self, x):
        if x.requires_grad and torch.is_grad_enabled():
            x = x.view_as(x)
            x.register_hook(self._sum_grad)  # f's backward
        h = F.gelu(self.fc1(x))
        y = F.linear(h, self.fc2.weight)
        dist.all_reduce(y, group=self.group)  # g's forward; invisible to autograd, so identity backward
        return y if self.fc2.bias is None else y + self.fc2.bias


def shard_mlp(fc1: nn.Linear, fc2: nn.Linear, *, rank: int, world_size: int, group=None) -> nn.Module:
    if fc1.out_features % world_size != 0:
        raise ValueError(f"{fc1.out_features} hidden units do not split over {world_size} ranks")
    return TPMLP(fc1, fc2, rank, world_size, group)
