"""Facts taught by questions/lora.yaml, checked by running torch.

Each single or multi question's test settles every choice (`# choice N` beside the assertion, N
its index in the file) and then checks that the file's key is exactly the set found true.
Rests on PEFT's design rather than on torch alone: lora-merge's claim about serving several
adapters from one merged copy (the test shows a merged weight reproduces only its own adapter).
"""

import math

import pytest
import torch
import torch.nn as nn
from bankkeys import right_choices, topic_questions

TOPIC = "lora"



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
    weight_shape = layer.base.weight.shape

    def update_shape(a_shape, b_shape):
        """Shape of B @ A, or None when the product is not defined."""
        try:
            return (torch.zeros(b_shape) @ torch.zeros(a_shape)).shape
        except RuntimeError:
            return None

    assert (tuple(layer.lora_A.shape), tuple(layer.lora_B.shape)) == ((8, 1024), (4096, 8))
    assert update_shape((8, 1024), (4096, 8)) == weight_shape  # choice 3: true
    assert update_shape((1024, 8), (8, 4096)) is None  # choice 0: B @ A undefined
    assert update_shape((8, 4096), (1024, 8)) == (1024, 4096) != weight_shape  # choice 1: transposed
    assert update_shape((4096, 1024), (4096, 1024)) is None  # choice 2: undefined, and full size
    assert right_choices(TOPIC, "lora-shapes") == {3}


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
    assert torch.equal(y, base(x))  # choice 0: true
    y.pow(2).sum().backward()
    assert layer.lora_B.grad.abs().max() > 0  # choice 1: false, B's gradient is non-zero
    assert torch.count_nonzero(layer.lora_A.grad) == 0  # choice 2: false, A's gradient is zero
    assert base.weight.grad is None

    # choice 4: false. One SGD step changes the effective weight by s * dB @ A, a rank-r update
    # that differs from the full fine-tuning step on W.
    lr = 0.1
    full = nn.Linear(16, 12)
    full.load_state_dict(base.state_dict())
    full(x).pow(2).sum().backward()
    full_delta = -lr * full.weight.grad
    lora_delta = layer.scaling * (-lr * layer.lora_B.grad) @ layer.lora_A.detach()
    assert torch.linalg.matrix_rank(lora_delta) <= 4
    assert not torch.allclose(lora_delta, full_delta, atol=1e-4)

    # choice 3: true. Both zero: a saddle point, neither ever gets a gradient.
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
    assert right_choices(TOPIC, "lora-init-gradients") == {0, 3}


@pytest.mark.verifies("lora-param-count-qv")
def test_param_count_q_v_rank8():
    total = 0
    for _ in range(32):
        for _proj in ("q_proj", "v_proj"):
            base = nn.Linear(4096, 4096, device="meta")
            total += lora_params(RefLoRALinear(base, rank=8, alpha=16))
    assert total == topic_questions(TOPIC)["lora-param-count-qv"].answer
    assert 4096 * 4096 // (8 * (4096 + 4096)) == 256


@pytest.mark.verifies("lora-param-count-all-linear")
def test_param_count_all_linear_rank16():
    shapes = [(4096, 4096)] * 4 + [(4096, 11008), (4096, 11008), (11008, 4096)]
    per_layer = sum(
        lora_params(RefLoRALinear(nn.Linear(i, o, device="meta"), rank=16, alpha=32))
        for i, o in shapes
    )
    assert per_layer == 1249280
    assert per_layer * 32 == topic_questions(TOPIC)["lora-param-count-all-linear"].answer
    assert 0.0059 < 39976960 / 6738415616 < 0.0060  # LLaMA-2-7B has 6,738,415,616 parameters
    assert per_layer * 32 / (32 * 2 * 8 * (4096 + 4096)) == pytest.approx(9.5, abs=0.05)  # vs q/v at r = 8


@pytest.mark.verifies("lora-merge")
def test_merge_matches_unmerged_and_can_be_undone():
    torch.manual_seed(0)
    base = nn.Linear(256, 128)
    layer = RefLoRALinear(base, rank=8, alpha=16)
    other = RefLoRALinear(nn.Linear(256, 128), rank=8, alpha=16)  # a second adapter on the same base
    with torch.no_grad():
        layer.lora_B.normal_(std=0.02)
        other.base.load_state_dict(base.state_dict())
        other.lora_B.normal_(std=0.02)
    x = torch.randn(32, 256)
    with torch.no_grad():
        unmerged = layer(x)
        merged_w = layer.merged_weight()
        merged = nn.functional.linear(x, merged_w, base.bias)
        # choice 1: true. The merged layer is a plain Linear of the base's shape.
        assert merged_w.shape == base.weight.shape
        diff = (merged - unmerged).abs().max().item()
        assert 0 < diff < 1e-5  # choice 2: false, rounding-level agreement, not bit for bit
        assert (unmerged - base(x)).abs().max() > 1e-2      # the adapter really changes outputs
        # choice 0: false. The merged weight reproduces its own adapter only, not another one.
        assert (merged - other(x)).abs().max() > 1e-2
        # choice 4: true. Subtracting the product restores the base up to rounding.
        restored = merged_w - layer.scaling * layer.lora_B @ layer.lora_A
        assert torch.allclose(restored, base.weight, atol=1e-6, rtol=0)

        # choice 3: false. Merging into a 4-bit grid: most of the small update rounds away.
        w = base.weight
        scale = (w.max() - w.min()).item() / 15
        zp = int(round(-w.min().item() / scale))
        q = lambda t: torch.fake_quantize_per_tensor_affine(t, scale, zp, 0, 15)
        delta = merged_w - w
        kept = q(w + delta) - q(w)
        rel_err = ((kept - delta).norm() / delta.norm()).item()
        assert rel_err > 0.5
    assert right_choices(TOPIC, "lora-merge") == {1, 4}


@pytest.mark.verifies("lora-dropout-at-init")
def test_dropout_has_no_effect_while_b_is_zero():
    torch.manual_seed(0)
    base = nn.Linear(32, 16)
    layer = RefLoRALinear(base, rank=4, alpha=8, dropout=0.1).train()
    x = torch.randn(8, 32)
    y1, y2 = layer(x), layer(x)
    assert torch.equal(y1, y2)  # choices 1 and 2: false, the two outputs are identical
    assert torch.equal(y1, base(x))  # choice 0: true; choice 3: false, no 1/0.9 factor
    assert not torch.equal(y1, base(x) / 0.9)  # choice 3: false
    # Once B is non-zero, train-mode outputs vary between calls; eval mode is deterministic.
    with torch.no_grad():
        layer.lora_B.normal_()
    assert not torch.equal(layer(x), layer(x))
    layer.eval()
    assert torch.equal(layer(x), layer(x))
    assert right_choices(TOPIC, "lora-dropout-at-init") == {0}


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
    _substring_add_lora(model)  # choice 3: false, the first call does not raise
    assert _wrapped(model) == ["attn.q_proj", "attn.v_proj", "cross.kv_proj"]  # choice 2: true
    assert model["attn"].k_proj.weight.requires_grad  # choice 4: true
    assert model["attn"].k_proj.bias.requires_grad  # choice 4: true
    _substring_add_lora(model)
    assert "attn.q_proj.base" in _wrapped(model)  # choice 1: true, wrapped twice
    assert isinstance(model["attn"].q_proj.base, RefLoRALinear)  # choice 0: false

    # choice 5: true. Exact matching on the last name component wraps each target once.
    fixed = nn.ModuleDict({"attn": _Block(), "cross": _Cross()})
    _exact_add_lora(fixed)
    _exact_add_lora(fixed)
    assert _wrapped(fixed) == ["attn.q_proj", "attn.v_proj"]
    assert right_choices(TOPIC, "lora-add-lora-substring-bug") == {1, 2, 4, 5}
