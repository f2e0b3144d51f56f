"""moe_routing: what moe_forward must give, computed densely in float64 from the same inputs: every
expert run on every token, weighted by a (T, E) gate matrix that is zero outside each token's top k.
The choice of experts is the contract's: torch.topk of the float32 probabilities of router(x) in x's
dtype. Loaded by path, never imported by name."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from quizapp.checking.harness import sibling_module

scn = sibling_module(__file__, "scenarios")


@dataclass
class Truth:
    chosen: torch.Tensor  # (T, k) torch.topk's indices, on the CPU
    probs: torch.Tensor  # (T, E) float64 probabilities (bfloat16 cases: those of the float32 softmax)
    gates: torch.Tensor  # (T, E) float64: each token's renormalised gates, 0 where not chosen
    y: torch.Tensor  # (T, d) float64
    aux: float
    y_grads: dict  # name -> float64 gradient of sum(y * w)
    aux_grads: dict  # name -> float64 gradient of aux_loss (None: aux_loss does not depend on it)
    outputs: torch.Tensor  # (T, E, d) float64: every expert's output on every token


def named_parameters(router, experts) -> list[tuple[str, torch.nn.Parameter]]:
    return ([(f"router.{n}", p) for n, p in router.named_parameters()]
            + [(f"experts[{e}].{n}", p) for e, expert in enumerate(experts) for n, p in expert.named_parameters()])


def gate_matrix(weights: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
    """(T, E) of the given per-token weights of all experts, kept at the chosen ones and renormalised."""
    kept = weights.gather(1, chosen)
    return torch.zeros_like(weights).scatter(1, chosen, kept / kept.sum(-1, keepdim=True))


def counts(chosen: torch.Tensor, num_experts: int) -> torch.Tensor:
    """f: the share of tokens that have each expert among their choices (sums to k), float64."""
    return F.one_hot(chosen, num_experts).sum(1).double().mean(0)


def compute(inputs, k: int) -> Truth:
    """The float32 cases in float64 with gradients. A bfloat16 case starts from the float32
    probabilities of the bf16 logits and the experts' own bf16 outputs, as the contract does: only the
    gates' weighting and the sum are left for the solution to round, and no gradient is compared."""
    x, router, experts = inputs.x, inputs.router, inputs.experts
    probs32, chosen = scn.routing(x, router, k)
    chosen = chosen.cpu()
    if x.dtype != torch.float32:
        with torch.no_grad():
            outputs = torch.stack([expert(x) for expert in experts], dim=1).cpu().double()
        probs = probs32.cpu().double()
        gates = gate_matrix(probs, chosen)
        y = (gates.unsqueeze(-1) * outputs).sum(1)
        aux = len(experts) * float((counts(chosen, len(experts)) * probs.mean(0)).sum())
        return Truth(chosen, probs, gates, y, aux, {}, {}, outputs)
    router64, experts64 = copy.deepcopy(router).cpu().double(), copy.deepcopy(experts).cpu().double()
    x64 = x.detach().cpu().double().requires_grad_(True)
    probs = F.softmax(router64(x64), dim=-1)
    gates = gate_matrix(probs, chosen)
    outputs = torch.stack([expert(x64) for expert in experts64], dim=1)
    y = (gates.unsqueeze(-1) * outputs).sum(1)
    aux = len(experts) * (counts(chosen, len(experts)) * probs.mean(0)).sum()
    named = named_parameters(router64, experts64) + [("x", x64)]
    tensors = [t for _, t in named]
    w = inputs.weights.detach().cpu().double()
    y_grads = torch.autograd.grad((y * w).sum(), tensors, retain_graph=True, allow_unused=True)
    aux_grads = torch.autograd.grad(aux, tensors, allow_unused=True)
    return Truth(chosen, probs.detach(), gates.detach(), y.detach(), aux.item(),
                 {n: g for (n, _), g in zip(named, y_grads)}, {n: g for (n, _), g in zip(named, aux_grads)},
                 outputs.detach())


# -- the usual mistakes, to name the one a wrong result matches ------------------------------------

def y_variants(t: Truth, k: int) -> dict[str, torch.Tensor]:
    """y as the usual mistakes compute it, from the truth's probabilities and expert outputs."""
    kept = torch.zeros_like(t.probs).scatter(1, t.chosen, t.probs.gather(1, t.chosen))
    out = {
        "the gates are the k chosen probabilities themselves: they were not renormalised to sum to 1":
            (kept.unsqueeze(-1) * t.outputs).sum(1),
        "every expert is weighted by its full-softmax probability (a dense, soft mixture, no top-k)":
            (t.probs.unsqueeze(-1) * t.outputs).sum(1),
        "the gates are all 1: the chosen experts' outputs are summed unweighted":
            ((kept > 0).double().unsqueeze(-1) * t.outputs).sum(1),
        "the gates are 1/k each: the chosen experts' outputs are averaged":
            ((kept > 0).double().unsqueeze(-1) * t.outputs).sum(1) / k,
    }
    return out


def aux_variants(t: Truth, k: int) -> dict[str, float]:
    """aux_loss as the usual mistakes compute it."""
    num_experts = t.probs.shape[1]
    f = counts(t.chosen, num_experts)
    top1 = counts(t.chosen[:, :1], num_experts)
    mean_prob = t.probs.mean(0)
    gates_mean = t.gates.mean(0)
    return {
        "f counts only each token's first choice (top-1, Switch Transformer's f), so it sums to 1; HF's "
        "function counts all k choices, and f sums to k": num_experts * float((top1 * mean_prob).sum()),
        "f was divided by k (it sums to 1); HF's function counts each of the k choices once, so f sums to k":
            num_experts * float((f * mean_prob).sum()) / k,
        "P is the mean of the renormalised gates, not of the full softmax probabilities":
            num_experts * float((f * gates_mean).sum()),
        "the factor E (the number of experts) is missing": float((f * mean_prob).sum()),
        "the factor E appears twice": num_experts ** 2 * float((f * mean_prob).sum()),
        "P_i is summed over tokens instead of averaged": num_experts * float((f * t.probs.sum(0)).sum()),
    }
