# quizapp: exercise=moe_routing
# expect: pass
"""Right, with Python loops over the tokens: each token's routing is computed on its own row, its
row index is appended to the lists of its experts, each chosen expert then runs once on its list,
and a second loop over the tokens adds up their gated outputs. Slow for real batches (three Python
iterations per token), but every expert is still called once."""

import torch
import torch.nn.functional as F


def moe_forward(x, router, experts, *, k=2):
    num_experts = len(experts)
    if not (1 <= k <= num_experts):
        raise ValueError("k must be in [1, number of experts]")
    probs = F.softmax(router(x), dim=-1, dtype=torch.float32)
    routes = []  # per token: [(expert, gate), ...]
    members = [[] for _ in range(num_experts)]
    for t in range(x.shape[0]):
        top, idx = torch.topk(probs[t], k)
        gates = (top / top.sum()).to(x.dtype)
        routes.append(list(zip(idx.tolist(), gates)))
        for e in idx.tolist():
            members[e].append(t)
    outputs, position = {}, {}
    for e, tokens in enumerate(members):
        if tokens:
            outputs[e] = experts[e](x[tokens])
            position[e] = {t: i for i, t in enumerate(tokens)}
    rows = []
    for t, route in enumerate(routes):
        rows.append(sum(gate * outputs[e][position[e][t]] for e, gate in route))
    y = torch.stack(rows)
    counts = torch.zeros(num_experts, device=x.device)
    for e, tokens in enumerate(members):
        counts[e] = len(tokens)
    aux = num_experts * torch.sum(counts / x.shape[0] * probs.mean(dim=0))
    return y, aux
