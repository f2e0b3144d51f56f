# quizapp: exercise=moe_routing
# expect: fail aux-loss: "top-1, Switch Transformer's f"
# expect: fail aux-gradients ties bfloat16
"""BUGGY (aux_top1_counts): the balancing loss counts each token's first choice only, Switch
Transformer's f for top-1 routing, carried over to top-k: f sums to 1 instead of k, and the experts
tokens pick second are not counted as loaded at all."""

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
    f = F.one_hot(probs.argmax(dim=-1), num_experts).float().mean(dim=0)
    return y, num_experts * torch.sum(f * probs.mean(dim=0))
