"""tensor_parallel: what a run should give, from the unsharded MLP, and what each known mistake gives.

Everything here runs in the grade's child, on the CPU, in the run's dtype, from the same seeds the
ranks drew their layers and inputs from (scenarios.py). Loaded by path, never imported by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from quizapp.checking.harness import sibling_module

scn = sibling_module(__file__, "scenarios")


@dataclass
class Truth:
    """The unsharded MLP's results for one run, and each rank's share of them."""

    world: int
    shards: list[dict]            # per rank: name -> the slice it must hold (None where there is no bias)
    output: torch.Tensor          # fc2(gelu(fc1(x))), the same on every rank
    grads: list[dict]             # per rank: name -> the matching slice of the unsharded gradient
    x_grad: torch.Tensor
    partials: list[torch.Tensor]  # rank r's fc2-shard product, before any sum and without fc2's bias
    x_grad_shares: list[torch.Tensor]  # what rank r's shard alone contributes to x.grad
    bias: torch.Tensor | None     # fc2.bias
    wrong: dict = field(default_factory=dict)  # mistake -> per-rank outputs it gives


def unsharded(run, seed: int, world: int = scn.WORLD) -> Truth:
    fc1, fc2 = scn.build_layers(run, seed)
    x = scn.build_input(run, seed).detach().requires_grad_(True)
    up = scn.upstream(run, seed)
    out = fc2(F.gelu(fc1(x)))
    (out * up).sum().backward()
    w1, b1, w2, b2 = fc1.weight.detach(), _detached(fc1.bias), fc2.weight.detach(), _detached(fc2.bias)
    shards, grads, partials, shares, sum_hidden_parts, pre_gelu_parts = [], [], [], [], [], []
    for r in range(world):
        rows = scn.rows(r, world)
        shards.append({"fc1.weight": w1[rows], "fc1.bias": None if b1 is None else b1[rows],
                       "fc2.weight": w2[:, rows], "fc2.bias": b2})
        grads.append({"fc1.weight": fc1.weight.grad[rows], "fc1.bias": None if b1 is None else fc1.bias.grad[rows],
                      "fc2.weight": fc2.weight.grad[:, rows], "fc2.bias": None if b2 is None else fc2.bias.grad})
        xr = x.detach().clone().requires_grad_(True)
        z = F.linear(xr, w1[rows], None if b1 is None else b1[rows])
        partial = F.linear(F.gelu(z), w2[:, rows])
        (partial * up).sum().backward()
        partials.append(partial.detach())
        shares.append(xr.grad)
        pre_gelu_parts.append(z.detach())
        sum_hidden_parts.append(F.gelu(z).detach())
    truth = Truth(world, shards, out.detach(), grads, x.grad, partials, shares, b2)
    with torch.no_grad():
        add_bias = (lambda y: y) if b2 is None else (lambda y: y + b2)
        truth.wrong["no-sum"] = [add_bias(p) for p in partials]
        summed_hidden = sum(sum_hidden_parts)
        summed_pre_gelu = F.gelu(sum(pre_gelu_parts))
        truth.wrong["sum-hidden"] = [add_bias(F.linear(summed_hidden, s["fc2.weight"])) for s in shards]
        truth.wrong["sum-pre-gelu"] = [add_bias(F.linear(summed_pre_gelu, s["fc2.weight"])) for s in shards]
        tanh = fc2(F.gelu(fc1(x.detach()), approximate="tanh"))
        truth.wrong["tanh"] = [tanh] * world
        if b2 is not None:
            truth.wrong["bias-each"] = [sum(partials) + world * b2] * world
    return truth


def default_group_outputs(run, seeds: list[int], world: int) -> list[torch.Tensor]:
    """Each group's output when the sum runs over every rank of every group (the default group)
    instead of the group's own: the same sum of all partial outputs, plus the group's fc2.bias."""
    truths = [unsharded(run, seed, world) for seed in seeds]
    everything = sum(sum(t.partials) for t in truths)
    return [everything if t.bias is None else everything + t.bias for t in truths]


def default_group_x_grads(run, seeds: list[int], world: int) -> list[torch.Tensor]:
    """x.grad when f's backward sums over the default group: every group's shares added together."""
    total = sum(sum(t.x_grad_shares) for t in (unsharded(run, seed, world) for seed in seeds))
    return [total] * len(seeds)


def _detached(t):
    return None if t is None else t.detach()
