# quizapp: exercise=moe_routing
# expect: pass
"""Right, with k = 1 written out: every gate is p / p = 1, so this solution uses a constant 1 and the
router is left out of y's graph altogether. The gradient y gives the router is then None instead of
rounding noise around 0, which counts as the zero it should be."""

import torch
import torch.nn.functional as F


def moe_forward(x, router, experts, *, k=2):
    num_experts = len(experts)
    if not 1 <= k <= num_experts:
        raise ValueError(f"k must be between 1 and {num_experts}, got {k}")
    probs = F.softmax(router(x), dim=-1, dtype=torch.float32)
    top, chosen = torch.topk(probs, k, dim=-1)
    gates = torch.ones_like(top) if k == 1 else top / top.sum(-1, keepdim=True)
    gates = gates.to(x.dtype)
    y = torch.zeros_like(x)
    for e in chosen.unique().tolist():
        tokens, slot = torch.where(chosen == e)
        y = y.index_add(0, tokens, experts[e](x[tokens]) * gates[tokens, slot].unsqueeze(-1))
    f = F.one_hot(chosen, num_experts).sum(dim=1).float().mean(dim=0)
    return y, num_experts * torch.sum(f * probs.mean(dim=0))
