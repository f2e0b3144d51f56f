# quizapp: exercise=moe_routing
# expect: fail aux-loss: "f was divided by k"
# expect: fail aux-gradients ties bfloat16
"""BUGGY (aux_divided_by_k): normalises f to a distribution, dividing the top-k counts by k, so that
a balanced router scores 1 as in Switch Transformer. HF's function does not: its f sums to k, and the
loss (and its gradient) comes out k times smaller than theirs."""

import torch
import torch.nn.functional as F


def moe_forward(x, router, experts, *, k=2):
    num_experts = len(experts)
    if not 1 <= k <= num_experts:
        raise ValueError(f"k must be between 1 and {num_experts}, got {k}")
    probs = F.softmax(router(x), dim=-1, dtype=torch.float32)
    top, chosen = torch.topk(probs, k, dim=-1)
    gates = (top / top.sum(-1, keepdim=True)).to(x.dtype)
    y = torch.zeros_like(x)
    for e in chosen.unique().tolist():
        tokens, slot = torch.where(chosen == e)
        y = y.index_add(0, tokens, experts[e](x[tokens]) * gates[tokens, slot].unsqueeze(-1))
    f = F.one_hot(chosen, num_experts).sum(dim=1).float().mean(dim=0) / k
    return y, num_experts * torch.sum(f * probs.mean(dim=0))
