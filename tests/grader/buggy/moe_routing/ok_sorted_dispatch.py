# quizapp: exercise=moe_routing
# expect: pass
"""Right, with the grouped layout of dropless MoE kernels: the T * k (token, expert) pairs are sorted
by expert, split into one contiguous block per expert, each block runs through its expert once, and
the gated outputs are scattered back to their tokens. The sort is over expert ids, after torch.topk
has chosen; it never breaks a tie between probabilities."""

import torch


def moe_forward(x, router, experts, *, k=2):
    num_experts = len(experts)
    if not 0 < k <= num_experts:
        raise ValueError(f"k={k} outside 1..{num_experts}")
    probs = torch.softmax(router(x).to(torch.float32), dim=-1)
    top, chosen = probs.topk(k, dim=-1)
    gates = (top / top.sum(-1, keepdim=True)).to(x.dtype).flatten()
    flat = chosen.flatten()
    order = torch.argsort(flat, stable=True)
    token_of = order // k
    sizes = torch.bincount(flat, minlength=num_experts).tolist()
    pieces = []
    for e, block in enumerate(torch.split(token_of, sizes)):
        if sizes[e]:
            pieces.append(experts[e](x[block]))
    out = torch.cat(pieces) * gates[order].unsqueeze(-1)
    y = torch.zeros_like(x).index_add(0, token_of, out)
    f = torch.bincount(flat, minlength=num_experts).to(torch.float32) / x.shape[0]
    aux = num_experts * (f * probs.mean(0)).sum()
    return y, aux
