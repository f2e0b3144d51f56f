# quizapp: exercise=moe_routing
# expect: fail expert-calls: "which no token chose, was called with an empty batch"
"""BUGGY (empty_batches): loops over all E experts, as Hugging Face's Mixtral block did before it
learned to skip the experts no token hit: an idle expert is called on a (0, d) batch. y is right; each
such call still costs a kernel launch and, under expert parallelism, a collective for nothing."""

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
    for e in range(num_experts):
        tokens, slot = torch.where(chosen == e)
        y = y.index_add(0, tokens, experts[e](x[tokens]) * gates[tokens, slot].unsqueeze(-1))
    f = F.one_hot(chosen, num_experts).sum(dim=1).float().mean(dim=0)
    return y, num_experts * torch.sum(f * probs.mean(dim=0))
