# quizapp: exercise=lora
"""LoRA: low-rank adapters for nn.Linear. Grade it with: quizapp grade lora.py"""

import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    """Wraps a frozen nn.Linear and adds a trainable low-rank update.

    Attributes the grader reads:
      base    -- the wrapped nn.Linear, frozen (requires_grad False on its weight and bias)
      lora_A  -- nn.Parameter of shape (rank, base.in_features), random non-zero init
      lora_B  -- nn.Parameter of shape (base.out_features, rank), zeros at init
      scaling -- alpha / rank (a float)
    lora_A and lora_B take the base layer's device and dtype.
    """

    def __init__(self, base: nn.Linear, rank: int, alpha: float, dropout: float = 0.0):
        super().__init__()
        # TODO: keep `base` and freeze its parameters
        # TODO: create lora_A (random, e.g. nn.init.kaiming_uniform_(A, a=math.sqrt(5))) and lora_B (zeros)
        #       on base.weight's device and dtype; set self.scaling = alpha / rank
        # TODO: a dropout for the LoRA branch (nn.Identity when dropout == 0)
        raise NotImplementedError("LoRALinear is not written yet: see the TODOs in this file")

    def forward(self, x):
        # TODO: base(x) + scaling * dropout(x) @ lora_A.T @ lora_B.T  (dropout on the LoRA branch only)
        raise NotImplementedError("LoRALinear.forward is not written yet: see the TODOs in this file")

    def merge(self) -> nn.Linear:
        """A NEW nn.Linear computing the same function: weight = W + scaling * B @ A, same bias.
        `self` must be left unchanged."""
        # TODO
        raise NotImplementedError("LoRALinear.merge is not written yet: see the TODOs in this file")


def add_lora(model, rank, alpha, target_modules, dropout=0.0) -> nn.Module:
    """Replace, in place, every nn.Linear whose attribute name (the last part of its qualified
    name, e.g. "q_proj" in "layers.0.attn.q_proj") is in `target_modules` by a LoRALinear wrapping
    it; freeze every other parameter; return the model. Afterwards only lora_A/lora_B train.
    A second call must wrap nothing again (never a LoRALinear's own `base`, never twice)."""
    # TODO: find (parent, attribute name, child) for each target nn.Linear; do not look inside LoRALinear
    # TODO: freeze every parameter that is not a LoRA parameter
    # TODO: setattr(parent, name, LoRALinear(child, rank, alpha, dropout))
    raise NotImplementedError("add_lora is not written yet: see the TODOs in this file")
