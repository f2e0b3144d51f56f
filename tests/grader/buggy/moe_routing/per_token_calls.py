# quizapp: exercise=moe_routing
# expect: fail expert-calls: "22 times in one forward, with 1 row each" "once per token"
"""BUGGY (per_token_calls): the obvious loop: for each token, for each of its k experts, call the
expert on that one row. y is right; an expert chosen by 20 tokens runs 20 one-row matmuls."""

import torch
import torch.nn.functional as F


def moe_forward(x, router, experts, *, k=2):
    num_experts = len(experts)
    if not 1 <= k <= num_experts:
        raise ValueError(f"k must be between 1 and {num_experts}, got {k}")
    probs = F.softmax(router(x), dim=-1, dtype=torch.float32)
    top, chosen = torch.topk(probs, k, dim=-1)
    gates = (top / top.sum(-1, keepdim=True)).to(x.dtype)
    rows = []
    for t in range(len(x)):
        rows.append(sum(gates[t, s] * experts[int(chosen[t, s])](x[t:t + 1])[0] for s in range(k)))
    f = F.one_hot(chosen, num_experts).sum(dim=1).float().mean(dim=0)
    return torch.stack(rows), num_experts * torch.sum(f * probs.mean(dim=0))
