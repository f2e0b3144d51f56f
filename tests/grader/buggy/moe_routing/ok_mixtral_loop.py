# quizapp: exercise=moe_routing
# expect: pass
"""Right, laid out as Hugging Face's Mixtral block: an (E, k, T) expert mask, a loop over the experts
that were hit, torch.where for each one's (slot, token) pairs, index_add_ into a zero buffer; the aux
loss as load_balancing_loss_func computes it from a (k, E) table of per-slot token fractions."""

import torch
import torch.nn.functional as F


def moe_forward(x, router, experts, *, k=2):
    num_experts = len(experts)
    if k < 1 or k > num_experts:
        raise ValueError(f"need 1 <= k <= {num_experts}, got k={k}")
    router_logits = router(x)
    routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
    top_weights, selected = torch.topk(routing_weights, k, dim=-1)
    top_weights = top_weights / top_weights.sum(dim=-1, keepdim=True)
    top_weights = top_weights.to(x.dtype)
    final = torch.zeros_like(x)
    expert_mask = F.one_hot(selected, num_classes=num_experts).permute(2, 1, 0)
    hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
    for expert_idx in hit.flatten().tolist():
        slot, top_x = torch.where(expert_mask[expert_idx])
        current = experts[expert_idx](x[top_x]) * top_weights[top_x, slot, None]
        final.index_add_(0, top_x, current.to(x.dtype))
    tokens_per_expert = F.one_hot(selected, num_experts).float().mean(dim=0)  # (k, E)
    router_prob_per_expert = routing_weights.mean(dim=0)
    aux = torch.sum(tokens_per_expert * router_prob_per_expert.unsqueeze(0)) * num_experts
    return final, aux
