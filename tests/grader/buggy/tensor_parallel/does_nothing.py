# quizapp: exercise=tensor_parallel
# expect: fail shard-slices rejects-indivisible forward-output forward-communication process-group
# expect: skip shards-are-copies weight-gradients input-gradient backward-communication originals-untouched
"""Does nothing: shards nothing, sends nothing, and hands x back unchanged."""

from torch import nn


def shard_mlp(fc1: nn.Linear, fc2: nn.Linear, *, rank: int, world_size: int, group=None) -> nn.Module:
    return nn.Identity()
