# quizapp: exercise=moe_routing
# expect: fail expert-calls: "never through the module's call" "skips the module's hooks"
"""BUGGY (forward_bypasses_hooks): calls experts[e].forward(rows) instead of experts[e](rows). The
numbers are the same, but the module's hooks never run: forward pre-hooks, FSDP's parameter
gathering, activation-checkpointing wrappers and profilers built on hooks all miss the call."""

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
        y = y.index_add(0, tokens, experts[e].forward(x[tokens]) * gates[tokens, slot].unsqueeze(-1))
    f = F.one_hot(chosen, num_experts).sum(dim=1).float().mean(dim=0)
    return y, num_experts * torch.sum(f * probs.mean(dim=0))
