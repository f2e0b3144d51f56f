# quizapp: exercise=zero_optimizer
"""ZeRO stage 1 AdamW on a process group. Grade it with: quizapp grade zero_optimizer.py"""

import math  # noqa: F401 - for the bias corrections

import torch  # noqa: F401
import torch.distributed as dist  # noqa: F401


class ShardedAdamW:
    """AdamW whose moments are sharded over the ranks of `group` (ZeRO stage 1).

    Flatten the parameters row-major and concatenate them in order: N elements. With
    S = ceil(N / world_size), rank r owns elements [min(r*S, N), min((r+1)*S, N)) (torch.chunk's
    ranges); a parameter may be split between two ranks. step(): (1) average every gradient over
    the group (sum / world_size); (2) AdamW (torch.optim.AdamW's math, one step count per
    parameter, a parameter with .grad None skipped: no decay) on the owned elements only, with
    exp_avg and exp_avg_sq for those only; (3) give every rank every updated element (all-gather,
    or broadcasts from the owners: broadcast's src is a global rank). Keep no full-size buffer
    between steps, and build no torch.optim optimizer over the full parameters.
    """

    def __init__(self, params, *, rank, world_size, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0.01, group=None):
        # TODO: read `params` once (it may be a generator); work out this rank's range and the pieces
        #       of each parameter inside it; make exp_avg and exp_avg_sq for those elements only
        raise NotImplementedError("ShardedAdamW is not written yet: see the TODOs in this file")

    def step(self) -> None:
        # TODO: all-reduce every .grad on `group` and divide by world_size
        # TODO: AdamW on the owned elements: t += 1 (per parameter), p *= 1 - lr * weight_decay, the moments,
        #       p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
        # TODO: all-gather the updated ranges and write them back into every parameter
        raise NotImplementedError("ShardedAdamW is not written yet: see the TODOs in this file")

    def zero_grad(self, set_to_none=True) -> None:
        raise NotImplementedError("ShardedAdamW is not written yet: see the TODOs in this file")

    def state_numel(self) -> int:
        raise NotImplementedError("ShardedAdamW is not written yet: see the TODOs in this file")
