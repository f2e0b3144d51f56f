# quizapp: exercise=moe_routing
# expect: fail output-gradients: "router.weight gets no gradient from sum(y * w)" "a .detach() or torch.no_grad()"
"""BUGGY (detached_gates): reasons that the routing is a discrete choice with no gradient, and
detaches the gates. The indices do carry none, but the gate values do: cut, the router learns from
the aux loss alone, as if k were always 1."""

import torch
import torch.nn.functional as F


def moe_forward(x, router, experts, *, k=2):
    num_experts = len(experts)
    if not 1 <= k <= num_experts:
        raise ValueError(f"k must be between 1 and {num_experts}, got {k}")
    probs = F.softmax(router(x), dim=-1, dtype=torch.float32)
    top, chosen = torch.topk(probs, k, dim=-1)
    gates = (top / top.sum(-1, keepdim=True)).detach().to(x.dtype)
    y = torch.zeros_like(x)
    for e in chosen.unique().tolist():
        tokens, slot = torch.where(chosen == e)
        y = y.index_add(0, tokens, experts[e](x[tokens]) * gates[tokens, slot].unsqueeze(-1))
    f = F.one_hot(chosen, num_experts).sum(dim=1).float().mean(dim=0)
    return y, num_experts * torch.sum(f * probs.mean(dim=0))
