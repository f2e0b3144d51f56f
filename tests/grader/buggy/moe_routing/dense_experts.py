# quizapp: exercise=moe_routing
# expect: fail expert-calls: "every one of the" "all 40 rows of x"
"""BUGGY (dense_experts): runs every expert on every token, stacks the (T, E, d) outputs and weights
them with a (T, E) gate matrix that is zero outside each token's top k. y is right; the compute is
that of E experts per token instead of k, which is what routing exists to avoid."""

import torch
import torch.nn.functional as F


def moe_forward(x, router, experts, *, k=2):
    num_experts = len(experts)
    if not 1 <= k <= num_experts:
        raise ValueError(f"k must be between 1 and {num_experts}, got {k}")
    probs = F.softmax(router(x), dim=-1, dtype=torch.float32)
    top, chosen = torch.topk(probs, k, dim=-1)
    gates = (top / top.sum(-1, keepdim=True)).to(x.dtype)
    weights = torch.zeros(len(x), num_experts, dtype=x.dtype, device=x.device).scatter(1, chosen, gates)
    outputs = torch.stack([expert(x) for expert in experts], dim=1)
    y = (weights.unsqueeze(-1) * outputs).sum(1)
    f = F.one_hot(chosen, num_experts).sum(dim=1).float().mean(dim=0)
    return y, num_experts * torch.sum(f * probs.mean(dim=0))
