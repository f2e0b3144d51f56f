# quizapp: exercise=moe_routing
"""Reference solution: Mixtral's top-k routing, one batched call per chosen expert, and the
load-balancing loss of Hugging Face's load_balancing_loss_func."""

import torch
import torch.nn.functional as F


def moe_forward(x, router, experts, *, k=2) -> tuple[torch.Tensor, torch.Tensor]:
    num_experts = len(experts)
    if not 1 <= k <= num_experts:
        raise ValueError(f"k must be between 1 and the number of experts ({num_experts}), got {k}")
    logits = router(x)
    # float32 whatever x's dtype: bf16 probabilities would round away small differences between experts.
    probs = F.softmax(logits, dim=-1, dtype=torch.float32)
    top, chosen = torch.topk(probs, k, dim=-1)  # torch.topk's own order on ties
    gates = (top / top.sum(dim=-1, keepdim=True)).to(x.dtype)

    y = torch.zeros_like(x)
    for e in chosen.unique().tolist():  # experts no token chose are never called
        tokens, slot = torch.where(chosen == e)  # a token picks an expert at most once
        out = experts[e](x[tokens])
        y = y.index_add(0, tokens, out * gates[tokens, slot].unsqueeze(-1))

    # f: the share of tokens that have expert i among their k choices (sums to k); counts carry no gradient.
    counts = F.one_hot(chosen, num_experts).sum(dim=1).float()
    f = counts.mean(dim=0)
    mean_prob = probs.mean(dim=0)
    aux_loss = num_experts * torch.sum(f * mean_prob)
    return y, aux_loss
