# quizapp: exercise=moe_routing
# expect: fail gates output aux-loss output-gradients aux-gradients ties bfloat16 validation
# expect: skip expert-calls input-unchanged
"""Does nothing: calls neither the router nor an expert, and returns zeros."""

import torch


def moe_forward(x, router, experts, *, k=2):
    return torch.zeros_like(x), torch.zeros((), device=x.device)
