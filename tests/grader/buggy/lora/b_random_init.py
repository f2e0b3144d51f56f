# quizapp: exercise=lora
# expect: fail lora-init
"""BUGGY (b_random_init): lora_B random as well as lora_A, so the wrapped layer does not start as the base."""

import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, rank: int, alpha: float, dropout: float = 0.0):
        super().__init__()
        self.base = base
        for p in self.base.parameters():
            p.requires_grad_(False)  # the pretrained weights stay as they are
        self.rank = rank
        self.scaling = alpha / rank
        kw = {"device": base.weight.device, "dtype": base.weight.dtype}
        # A random (as nn.Linear initialises its weight), B zero: B @ A = 0, so the wrapped layer
        # starts out computing exactly what the base does, yet A's randomness lets B's gradient
        # be non-zero from the first step.
        self.lora_A = nn.Parameter(torch.empty(rank, base.in_features, **kw))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank, **kw))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        nn.init.kaiming_uniform_(self.lora_B, a=math.sqrt(5))
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()

    def forward(self, x):
        # Dropout on the LoRA branch's input only: the frozen base path sees x untouched.
        return self.base(x) + self.scaling * (self.dropout(x) @ self.lora_A.T @ self.lora_B.T)

    @torch.no_grad()
    def merge(self) -> nn.Linear:
        base = self.base
        merged = nn.Linear(base.in_features, base.out_features, bias=base.bias is not None,
                           device=base.weight.device, dtype=base.weight.dtype)
        merged.weight.copy_(base.weight + self.scaling * (self.lora_B @ self.lora_A))
        if base.bias is not None:
            merged.bias.copy_(base.bias)
        return merged


def add_lora(model, rank, alpha, target_modules, dropout=0.0) -> nn.Module:
    targets = set(target_modules)
    # Collect first, replace after: changing modules while iterating over them is unsafe.
    to_wrap = []
    for parent in model.modules():
        if isinstance(parent, LoRALinear):
            continue  # never look inside a wrapper: its `base` is not a target, and never wrap twice
        for name, child in parent.named_children():
            # Match the attribute name exactly: "q_proj" must not match "q_proj_extra" or "qq_proj".
            if name in targets and isinstance(child, nn.Linear):
                to_wrap.append((parent, name, child))
    # Freeze everything, then wrap: the new lora_A/lora_B are the only trainable parameters.
    # LoRA parameters from an earlier call stay trainable.
    keep = {id(p) for m in model.modules() if isinstance(m, LoRALinear) for p in (m.lora_A, m.lora_B)}
    for p in model.parameters():
        if id(p) not in keep:
            p.requires_grad_(False)
    for parent, name, child in to_wrap:
        setattr(parent, name, LoRALinear(child, rank, alpha, dropout))
    return model
