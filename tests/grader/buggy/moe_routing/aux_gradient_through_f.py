# quizapp: exercise=moe_routing
# expect: fail aux-gradients: "value is right" "f_i counts choices and has no gradient"
"""BUGGY (aux_gradient_through_f): wants the router to learn from the counts as well, and gives f a
straight-through gradient: f + P - P.detach() has f's value and P's gradient. The loss's value is
HF's; its gradient is E * (f_i + P_i) per probability instead of E * f_i."""

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
    mean_prob = probs.mean(dim=0)
    f = F.one_hot(chosen, num_experts).sum(dim=1).float().mean(dim=0)
    f = f + mean_prob - mean_prob.detach()
    return y, num_experts * torch.sum(f * mean_prob)
