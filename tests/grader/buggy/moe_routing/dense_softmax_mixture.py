# quizapp: exercise=moe_routing
# expect: fail gates: "every expert got a weight, as in a dense softmax mixture"
# expect: fail output: "every expert is weighted by its full-softmax probability"
# expect: fail expert-calls: "every one of the"
# expect: fail output-gradients ties bfloat16
"""BUGGY (dense_softmax_mixture): a soft mixture of experts, the pre-top-k idea: every expert runs on
every token and y is their average weighted by the full softmax. The top-k is computed for the aux
loss only. Nothing is sparse: E experts' compute per token, and every expert gets every token's
gradient."""

import torch
import torch.nn.functional as F


def moe_forward(x, router, experts, *, k=2):
    num_experts = len(experts)
    if not 1 <= k <= num_experts:
        raise ValueError(f"k must be between 1 and {num_experts}, got {k}")
    probs = F.softmax(router(x), dim=-1, dtype=torch.float32)
    outputs = torch.stack([expert(x) for expert in experts], dim=1)
    y = (probs.to(x.dtype).unsqueeze(-1) * outputs).sum(1)
    chosen = torch.topk(probs, k, dim=-1).indices
    f = F.one_hot(chosen, num_experts).sum(dim=1).float().mean(dim=0)
    return y, num_experts * torch.sum(f * probs.mean(dim=0))
