# quizapp: exercise=moe_routing
# expect: fail ties: "A sort or argsort breaks ties"
"""BUGGY (argsort_ties): picks each token's experts with argsort(descending=True)[:, :k] instead of
torch.topk. Wherever probabilities differ the choice is the same; where two experts tie exactly,
argsort returns the lower index first and torch.topk (on the CPU) does not."""

import torch
import torch.nn.functional as F


def moe_forward(x, router, experts, *, k=2):
    num_experts = len(experts)
    if not 1 <= k <= num_experts:
        raise ValueError(f"k must be between 1 and {num_experts}, got {k}")
    probs = F.softmax(router(x), dim=-1, dtype=torch.float32)
    chosen = probs.argsort(dim=-1, descending=True)[:, :k]
    top = probs.gather(1, chosen)
    gates = (top / top.sum(-1, keepdim=True)).to(x.dtype)
    y = torch.zeros_like(x)
    for e in chosen.unique().tolist():
        tokens, slot = torch.where(chosen == e)
        y = y.index_add(0, tokens, experts[e](x[tokens]) * gates[tokens, slot].unsqueeze(-1))
    f = F.one_hot(chosen, num_experts).sum(dim=1).float().mean(dim=0)
    return y, num_experts * torch.sum(f * probs.mean(dim=0))
