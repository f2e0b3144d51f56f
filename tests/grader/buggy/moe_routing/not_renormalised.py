# quizapp: exercise=moe_routing
# expect: fail gates: "sum to" "not renormalised"
# expect: fail output: "they were not renormalised"
# expect: fail output-gradients ties bfloat16
"""BUGGY (not_renormalised): the gates are the k chosen probabilities as they come out of the full
softmax, never divided by their sum: each token's output is scaled down by the probability mass of
the experts it did not choose, and with k = 1 the gate is p instead of 1."""

import torch
import torch.nn.functional as F


def moe_forward(x, router, experts, *, k=2):
    num_experts = len(experts)
    if not 1 <= k <= num_experts:
        raise ValueError(f"k must be between 1 and {num_experts}, got {k}")
    probs = F.softmax(router(x), dim=-1, dtype=torch.float32)
    top, chosen = torch.topk(probs, k, dim=-1)
    gates = top.to(x.dtype)
    y = torch.zeros_like(x)
    for e in chosen.unique().tolist():
        tokens, slot = torch.where(chosen == e)
        y = y.index_add(0, tokens, experts[e](x[tokens]) * gates[tokens, slot].unsqueeze(-1))
    f = F.one_hot(chosen, num_experts).sum(dim=1).float().mean(dim=0)
    return y, num_experts * torch.sum(f * probs.mean(dim=0))
