# quizapp: exercise=moe_routing
# expect: fail input-unchanged: "rows were reordered in place" "works on a copy"
# expect: fail output-gradients: "x was changed in place"
# expect: fail aux-gradients: "x was changed in place"
"""BUGGY (sorts_x_in_place): lays the tokens out by first-choice expert, to hand each expert a
contiguous slice, by permuting x's own rows through x.data, and scatters y back to the caller's
order. y and aux_loss are right; the caller's x is left sorted (and so is its gradient)."""

import torch
import torch.nn.functional as F


def moe_forward(x, router, experts, *, k=2):
    num_experts = len(experts)
    if not 1 <= k <= num_experts:
        raise ValueError(f"k must be between 1 and {num_experts}, got {k}")
    with torch.no_grad():
        first = F.softmax(router(x), dim=-1, dtype=torch.float32).argmax(-1)
        order = torch.argsort(first, stable=True)
    x.data = x.data[order]
    probs = F.softmax(router(x), dim=-1, dtype=torch.float32)
    top, chosen = torch.topk(probs, k, dim=-1)
    gates = (top / top.sum(-1, keepdim=True)).to(x.dtype)
    y_sorted = torch.zeros_like(x)
    for e in chosen.unique().tolist():
        tokens, slot = torch.where(chosen == e)
        y_sorted = y_sorted.index_add(0, tokens, experts[e](x[tokens]) * gates[tokens, slot].unsqueeze(-1))
    y = torch.zeros_like(y_sorted).index_copy(0, order, y_sorted)
    f = F.one_hot(chosen, num_experts).sum(dim=1).float().mean(dim=0)
    return y, num_experts * torch.sum(f * probs.mean(dim=0))
