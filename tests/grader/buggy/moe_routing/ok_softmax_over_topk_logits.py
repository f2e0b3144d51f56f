# quizapp: exercise=moe_routing
# expect: pass
"""Right, written as the Mixtral paper writes the gates: Softmax(TopK(logits)), a softmax over the k
chosen logits, which equals the renormalised top-k probabilities (the full normaliser cancels). The
full float32 softmax is still needed, for the aux loss's P."""

import torch
import torch.nn.functional as F


def moe_forward(x, router, experts, *, k=2):
    num_experts = len(experts)
    if k < 1 or k > num_experts:
        raise ValueError(f"k={k} is not in 1..{num_experts}")
    logits = router(x).float()
    top_logits, chosen = torch.topk(logits, k, dim=-1)
    gates = F.softmax(top_logits, dim=-1).to(x.dtype)
    y = torch.zeros_like(x)
    for e in range(num_experts):
        tokens, slot = (chosen == e).nonzero(as_tuple=True)
        if tokens.numel() == 0:
            continue
        y = y.index_add(0, tokens, experts[e](x[tokens]) * gates[tokens, slot, None])
    probs = F.softmax(logits, dim=-1)
    with torch.no_grad():
        f = torch.zeros(num_experts, device=x.device).index_add_(
            0, chosen.flatten(), torch.ones(chosen.numel(), device=x.device)) / len(x)
    return y, num_experts * (f * probs.mean(0)).sum()
