"""zero_optimizer: what a run should give, torch.optim.AdamW stepped in one process on the averaged
gradients, and what each known mistake gives instead.

Everything here runs in the grade's child, on the CPU, in the run's dtype, from the same seeds the
ranks drew their parameters and gradients from (scenarios.py). Loaded by path, never imported by name.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from quizapp.checking.harness import sibling_module

scn = sibling_module(__file__, "scenarios")


def rank_grads(run, seed: int, rank: int) -> list[list[torch.Tensor | None]]:
    """Rank `rank`'s gradients at each step (None where the parameter gets none)."""
    return [[u if scn.has_grad(run, i, step) else None for i, u in enumerate(scn.upstream(run, seed, rank, step))]
            for step in range(1, scn.steps_of(run) + 1)]


def combine(per_rank: list, divide_by: int | None) -> list:
    """Every step's gradients summed over the ranks given, divided by `divide_by` (None: the plain sum)."""
    out = []
    for step in zip(*per_rank):
        grads = []
        for parts in zip(*step):
            if parts[0] is None:
                grads.append(None)
                continue
            total = parts[0].clone()
            for g in parts[1:]:
                total = total + g
            grads.append(total if divide_by is None else total / divide_by)
        out.append(grads)
    return out


def torch_trajectory(run, seed: int, grads: list, coupled: bool = False) -> list[torch.Tensor]:
    """torch.optim.AdamW (or, `coupled`, torch.optim.Adam with L2 weight decay) stepped on `grads`:
    the flat parameters after every step."""
    params = [nn.Parameter(t.clone()) for t in scn.initial(run, seed)]
    hyper = dict(scn.DEFAULTS, **scn.HYPER[run[1]])
    kind = torch.optim.Adam if coupled else torch.optim.AdamW
    opt = kind(params, foreach=False, **hyper)
    out = []
    for step in grads:
        for p, g in zip(params, step):
            p.grad = None if g is None else g.clone()
        opt.step()
        out.append(scn.flat(params).clone())
    return out


def manual_trajectory(run, seed: int, grads: list, *, shared_step: bool = False,
                      none: str = "skip") -> list[torch.Tensor]:
    """AdamW written out, with one step count shared by every parameter (`shared_step`), and a None
    gradient skipped ("skip"), or decayed but not stepped ("decay")."""
    h = dict(scn.DEFAULTS, **scn.HYPER[run[1]])
    lr, (b1, b2), eps, wd = h["lr"], h["betas"], h["eps"], h["weight_decay"]
    params = [t.clone() for t in scn.initial(run, seed)]
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    t = [0] * len(params)
    out = []
    for k, step in enumerate(grads, start=1):
        for i, (p, g) in enumerate(zip(params, step)):
            if g is None:
                if none == "decay":
                    p.mul_(1 - lr * wd)
                continue
            t[i] += 1
            n = k if shared_step else t[i]
            p.mul_(1 - lr * wd)
            m[i].lerp_(g, 1 - b1)
            v[i].mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = (v[i].sqrt() / math.sqrt(1 - b2 ** n)).add_(eps)
            p.addcdiv_(m[i], denom, value=-lr / (1 - b1 ** n))
        out.append(scn.flat(params).clone())
    return out


class Truth:
    """The right trajectory of one run (one group's), and the trajectories of the known mistakes."""

    def __init__(self, run, seed: int, world: int = scn.WORLD):
        self.run, self.seed, self.world = run, seed, world
        self.per_rank = [rank_grads(run, seed, r) for r in range(world)]
        self.averaged = combine(self.per_rank, world)
        self.right = torch_trajectory(run, seed, self.averaged)
        self.start = scn.flat(scn.initial(run, seed))
        self._wrong: dict = {}

    def wrong(self, name: str, rank: int = 0) -> list[torch.Tensor]:
        key = (name, rank if name == "own" else 0)
        if key not in self._wrong:
            self._wrong[key] = self._compute(name, rank)
        return self._wrong[key]

    def _compute(self, name: str, rank: int) -> list[torch.Tensor]:
        run, seed = self.run, self.seed
        if name == "summed":
            return torch_trajectory(run, seed, combine(self.per_rank, None))
        if name == "own":
            return torch_trajectory(run, seed, self.per_rank[rank])
        if name == "coupled":
            return torch_trajectory(run, seed, self.averaged, coupled=True)
        if name == "shared-step":
            return manual_trajectory(run, seed, self.averaged, shared_step=True)
        if name == "none-as-zero":
            zeros = [[torch.zeros(s, dtype=scn.dtype_of(run[0])) if g is None else g for g, s in zip(step, scn.SHAPES)]
                     for step in self.averaged]
            return torch_trajectory(run, seed, zeros)
        if name == "none-decayed":
            return manual_trajectory(run, seed, self.averaged, none="decay")
        raise KeyError(name)


def default_group_trajectory(run, seeds: list[int], group: int, world: int) -> list[torch.Tensor]:
    """Group `group`'s parameters when its gradients are summed over every rank of every group (the
    default group) and divided by the group's world_size."""
    everyone = [g for seed in seeds for g in (rank_grads(run, seed, r) for r in range(world))]
    return torch_trajectory(run, seeds[group], combine(everyone, world))
