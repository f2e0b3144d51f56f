# quizapp: exercise=moe_routing
# expect: fail expert-calls: "times in one forward, with" "once per top-k slot"
"""BUGGY (per_slot_calls): loops over the k slots, then over the experts: an expert chosen first by
some tokens and second by others runs twice per forward, on two smaller batches. y is right; the
expert's weights are read twice and its matmuls are smaller than they need be."""

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
    for s in range(k):
        for e in range(num_experts):
            tokens = (chosen[:, s] == e).nonzero().flatten()
            if len(tokens):
                y = y.index_add(0, tokens, experts[e](x[tokens]) * gates[tokens, s].unsqueeze(-1))
    f = F.one_hot(chosen, num_experts).sum(dim=1).float().mean(dim=0)
    return y, num_experts * torch.sum(f * probs.mean(dim=0))
