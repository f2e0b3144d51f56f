"""Facts taught by questions/lora.yaml, checked by running torch."""

import math

import pytest
import torch
import torch.nn as nn


class RefLoRALinear(nn.Module):
    """A LoRA wrapper initialised the way PEFT does it (A kaiming-uniform, B zeros)."""

    def __init__(self, base: nn.Linear, rank: int, alpha: float, dropout: float = 0.0):
        super().__init__()
        self.base = base
        for p in self.base.parameters():
            p.requires_grad_(False)
        kw = {"device": base.weight.device, "dtype": base.weight.dtype}
        self.lora_A = nn.Parameter(torch.empty(rank, base.in_features, **kw))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank, **kw))
        if base.weight.device.type != "meta":
            nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.scaling = alpha / rank
        self.dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()

    def forward(self, x):
        return self.base(x) + self.scaling * (self.dropout(x) @ self.lora_A.T @ self.lora_B.T)

    def merged_weight(self):
        return self.base.weight + self.scaling * self.lora_B @ self.lora_A


def lora_params(module: nn.Module) -> int:
    return sum(p.numel() for n, p in module.named_parameters() if "lora_" in n)


@pytest.mark.verifies("lora-shapes")
def test_shapes_of_a_and_b():
    torch.manual_seed(0)
    layer = RefLoRALinear(nn.Linear(1024, 4096), rank=8, alpha=16)
    assert tuple(layer.lora_A.shape) == (8, 1024)
    assert tuple(layer.lora_B.shape) == (4096, 8)
    assert (layer.lora_B @ layer.lora_A).shape == layer.base.weight.shape
    # The transposed layout from the wrong choice cannot even be multiplied as B @ A.
    with pytest.raises(RuntimeError):
        torch.zeros(8, 4096) @ torch.zeros(1024, 8)


@pytest.mark.verifies("lora-init-gradients")
def test_init_output_and_first_gradients():
    torch.manual_seed(0)
    base = nn.Linear(16, 12)
    layer = RefLoRALinear(base, rank=4, alpha=8)
    # PEFT's kaiming-uniform with a=sqrt(5) bounds A by 1/sqrt(in_features).
    assert layer.lora_A.abs().max() <= 1 / math.sqrt(16)
    assert layer.lora_A.abs().min() > 0
    x = torch.randn(5, 16)
    y = layer(x)
    assert torch.equal(y, base(x))
    y.pow(2).sum().backward()
    assert layer.lora_B.grad.abs().max() > 0
    assert torch.count_nonzero(layer.lora_A.grad) == 0
    assert base.weight.grad is None

    # Both zero: a saddle point, neither ever gets a gradient.
    both_zero = RefLoRALinear(nn.Linear(16, 12), rank=4, alpha=8)
    with torch.no_grad():
        both_zero.lora_A.zero_()
    for _ in range(3):  # a few plain SGD steps
        both_zero.zero_grad()
        both_zero(x).pow(2).sum().backward()
        assert torch.count_nonzero(both_zero.lora_A.grad) == 0
        assert torch.count_nonzero(both_zero.lora_B.grad) == 0
        with torch.no_grad():
            for p in (both_zero.lora_A, both_zero.lora_B):
                p -= 0.1 * p.grad


@pytest.mark.verifies("lora-param-count-qv")
def test_param_count_q_v_rank8():
    total = 0
    for _ in range(32):
        for _proj in ("q_proj", "v_proj"):
            base = nn.Linear(4096, 4096, device="meta")
            total += lora_params(RefLoRALinear(base, rank=8, alpha=16))
    assert total == 4194304
    assert 4096 * 4096 // (8 * (4096 + 4096)) == 256


@pytest.mark.verifies("lora-param-count-all-linear")
def test_param_count_all_linear_rank16():
    shapes = [(4096, 4096)] * 4 + [(4096, 11008), (4096, 11008), (11008, 4096)]
    per_layer = sum(
        lora_params(RefLoRALinear(nn.Linear(i, o, device="meta"), rank=16, alpha=32))
        for i, o in shapes
    )
    assert per_layer == 1249280
    assert per_layer * 32 == 39976960
    assert 0.0059 < 39976960 / 6738415616 < 0.0060  # LLaMA-2-7B has 6,738,415,616 parameters


@pytest.mark.verifies("lora-merge")
def test_merge_matches_unmerged_and_can_be_undone():
    torch.manual_seed(0)
    base = nn.Linear(256, 128)
    layer = RefLoRALinear(base, rank=8, alpha=16)
    with torch.no_grad():
        layer.lora_B.normal_(std=0.02)
    x = torch.randn(32, 256)
    with torch.no_grad():
        unmerged = layer(x)
        merged_w = layer.merged_weight()
        merged = nn.functional.linear(x, merged_w, base.bias)
        diff = (merged - unmerged).abs().max().item()
        assert diff < 1e-5                                  # rounding-level agreement
        assert (unmerged - base(x)).abs().max() > 1e-2      # the adapter really changes outputs
        restored = merged_w - layer.scaling * layer.lora_B @ layer.lora_A
        assert torch.allclose(restored, base.weight, atol=1e-6, rtol=0)

        # Merging into a 4-bit grid: most of the small update rounds away.
        w = base.weight
        scale = (w.max() - w.min()).item() / 15
        zp = int(round(-w.min().item() / scale))
        q = lambda t: torch.fake_quantize_per_tensor_affine(t, scale, zp, 0, 15)
        delta = merged_w - w
        kept = q(w + delta) - q(w)
        rel_err = ((kept - delta).norm() / delta.norm()).item()
        assert rel_err > 0.5


@pytest.mark.verifies("lora-dropout-at-init")
def test_dropout_has_no_effect_while_b_is_zero():
    torch.manual_seed(0)
    base = nn.Linear(32, 16)
    layer = RefLoRALinear(base, rank=4, alpha=8, dropout=0.1).train()
    x = torch.randn(8, 32)
    y1, y2 = layer(x), layer(x)
    assert torch.equal(y1, y2)
    assert torch.equal(y1, base(x))
    # Once B is non-zero, train-mode outputs vary between calls; eval mode is deterministic.
    with torch.no_grad():
        layer.lora_B.normal_()
    assert not torch.equal(layer(x), layer(x))
    layer.eval()
    assert torch.equal(layer(x), layer(x))


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(8, 8)
        self.k_proj = nn.Linear(8, 8)
        self.v_proj = nn.Linear(8, 8)


class _Cross(nn.Module):
    def __init__(self):
        super().__init__()
        self.kv_proj = nn.Linear(8, 16)


def _substring_add_lora(model, targets=("q_proj", "v_proj"), rank=2):
    for name, module in list(model.named_modules()):
        if isinstance(module, nn.Linear) and any(t in name for t in targets):
            parent, _, child = name.rpartition(".")
            setattr(model.get_submodule(parent), child, RefLoRALinear(module, rank, 2 * rank))
    return model


def _exact_add_lora(model, targets=("q_proj", "v_proj"), rank=2):
    for name, module in list(model.named_modules()):
        parent, _, child = name.rpartition(".")
        if isinstance(module, nn.Linear) and child in targets:
            setattr(model.get_submodule(parent), child, RefLoRALinear(module, rank, 2 * rank))
    return model


def _wrapped(model):
    return sorted(n for n, m in model.named_modules() if isinstance(m, RefLoRALinear))


@pytest.mark.verifies("lora-add-lora-substring-bug")
def test_substring_matching_bugs_and_exact_fix():
    torch.manual_seed(0)
    model = nn.ModuleDict({"attn": _Block(), "cross": _Cross()})
    _substring_add_lora(model)  # the first call does not raise
    assert _wrapped(model) == ["attn.q_proj", "attn.v_proj", "cross.kv_proj"]
    assert model["attn"].k_proj.weight.requires_grad
    assert model["attn"].k_proj.bias.requires_grad
    _substring_add_lora(model)
    assert "attn.q_proj.base" in _wrapped(model)  # wrapped twice
    assert isinstance(model["attn"].q_proj.base, RefLoRALinear)

    fixed = nn.ModuleDict({"attn": _Block(), "cross": _Cross()})
    _exact_add_lora(fixed)
    _exact_add_lora(fixed)
    assert _wrapped(fixed) == ["attn.q_proj", "attn.v_proj"]
