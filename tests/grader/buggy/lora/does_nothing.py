# quizapp: exercise=lora
# expect: fail lora-shapes lora-init lora-forward lora-merge lora-gradients lora-bf16 add-lora-targets add-lora-freezes
# expect: skip lora-dropout add-lora-twice
# expect: no-number lora-shapes lora-merge
"""Does nothing: the adapter's weights exist but never run, merge hands the base layer back, and
add_lora hands the model back as it was."""

import torch
import torch.nn as nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, rank: int, alpha: float, dropout: float = 0.0):
        super().__init__()
        self.base = base
        self.lora_A = nn.Parameter(torch.zeros(rank, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank))
        self.scaling = alpha / rank

    def forward(self, x):
        return self.base(x)

    def merge(self) -> nn.Linear:
        return self.base


def add_lora(model, rank, alpha, target_modules, dropout=0.0) -> nn.Module:
    return model
