# quizapp: exercise=moe_routing
# expect: fail bfloat16: "the router ran in float32"
"""BUGGY (float32_router): Switch Transformer's selective precision, casting the router's input and
weights to float32 so that the logits are never rounded to bfloat16. A sound idea for training, but
not this contract (Mixtral's): its logits are router(x) in x's dtype, and the choice of experts and
the aux loss follow from those."""

import torch
import torch.nn.functional as F


def moe_forward(x, router, experts, *, k=2):
    num_experts = len(experts)
    if not 1 <= k <= num_experts:
        raise ValueError(f"k must be between 1 and {num_experts}, got {k}")
    bias = None if router.bias is None else router.bias.float()
    probs = F.softmax(F.linear(x.float(), router.weight.float(), bias), dim=-1)
    top, chosen = torch.topk(probs, k, dim=-1)
    gates = (top / top.sum(-1, keepdim=True)).to(x.dtype)
    y = torch.zeros_like(x)
    for e in chosen.unique().tolist():
        tokens, slot = torch.where(chosen == e)
        y = y.index_add(0, tokens, experts[e](x[tokens]) * gates[tokens, slot].unsqueeze(-1))
    f = F.one_hot(chosen, num_experts).sum(dim=1).float().mean(dim=0)
    return y, num_experts * torch.sum(f * probs.mean(dim=0))
