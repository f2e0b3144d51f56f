# quizapp: exercise=moe_routing
# expect: fail bfloat16: "came from a softmax in bfloat16" "re-applies softmax to bfloat16 logits"
"""BUGGY (hf_aux_on_logits): routes right, then computes the aux loss as Hugging Face's
load_balancing_loss_func does from the router logits: a second softmax, in the logits' own dtype, and
its own top-k. In float32 that is the same thing; with bfloat16 logits P is averaged from bf16
probabilities (the loss still comes out float32, by type promotion with the float32 counts)."""

import torch
import torch.nn.functional as F


def load_balancing_loss(router_logits, num_experts, top_k):
    routing_weights = F.softmax(router_logits, dim=-1)
    _, selected = torch.topk(routing_weights, top_k, dim=-1)
    expert_mask = F.one_hot(selected, num_experts)
    tokens_per_expert = torch.mean(expert_mask.float(), dim=0)
    router_prob_per_expert = torch.mean(routing_weights, dim=0)
    return torch.sum(tokens_per_expert * router_prob_per_expert.unsqueeze(0)) * num_experts


def moe_forward(x, router, experts, *, k=2):
    num_experts = len(experts)
    if not 1 <= k <= num_experts:
        raise ValueError(f"k must be between 1 and {num_experts}, got {k}")
    logits = router(x)
    probs = F.softmax(logits, dim=-1, dtype=torch.float32)
    top, chosen = torch.topk(probs, k, dim=-1)
    gates = (top / top.sum(-1, keepdim=True)).to(x.dtype)
    y = torch.zeros_like(x)
    for e in chosen.unique().tolist():
        tokens, slot = torch.where(chosen == e)
        y = y.index_add(0, tokens, experts[e](x[tokens]) * gates[tokens, slot].unsqueeze(-1))
    return y, load_balancing_loss(logits, num_experts, k)
