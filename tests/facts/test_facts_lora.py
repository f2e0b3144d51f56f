"""Facts taught by questions/lora.yaml, checked by running torch.

Each single or multi question's test settles every choice (`# choice N` beside the assertion, N
its index in the file) and then checks that the file's key is exactly the set found true.
Rests on PEFT's design rather than on torch alone: lora-merge's claim about serving several
adapters from one merged copy (the test shows a merged weight reproduces only its own adapter).
The cards' tests check counts, scalings, the NF4 levels (bitsandbytes' table, rebuilt from normal
quantiles as the QLoRA paper describes) and FLOPs with torch; their quality findings (Hu et al.
2021, Dettmers et al. 2023, Kalajdzievski 2023, Biderman et al. 2024) rest on the papers.
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


# --- the cards ---


@pytest.mark.verifies("lora-what-is")
def test_lora_layer_count_start_and_merge():
    torch.manual_seed(0)
    base = nn.Linear(64, 48)
    layer = RefLoRALinear(base, rank=4, alpha=8)
    x = torch.randn(5, 64)
    assert torch.equal(layer(x), base(x))  # B = 0: exactly the base model at step 0
    trainable = {n for n, p in layer.named_parameters() if p.requires_grad}
    assert trainable == {"lora_A", "lora_B"}
    assert lora_params(layer) == 4 * (64 + 48)
    with torch.no_grad():
        layer.lora_B.normal_(std=0.1)
        expected = x @ base.weight.T + base.bias + (8 / 4) * (x @ layer.lora_A.T) @ layer.lora_B.T
        assert torch.allclose(layer(x), expected, atol=1e-6)
        merged = nn.functional.linear(x, layer.merged_weight(), base.bias)  # no extra latency once merged
        assert torch.allclose(merged, layer(x), atol=1e-5)
    # 4096 x 4096 at r = 8
    big = RefLoRALinear(nn.Linear(4096, 4096, device="meta"), rank=8, alpha=16)
    assert lora_params(big) == 65_536 and big.base.weight.numel() == 16_777_216
    assert big.base.weight.numel() // lora_params(big) == 256


@pytest.mark.verifies("lora-scaling-rslora")
def test_alpha_scaling_numbers_and_adam():
    alpha = 16
    standard = {r: alpha / r for r in (8, 64)}
    rs = {r: alpha / math.sqrt(r) for r in (8, 64)}
    assert standard == {8: 2.0, 64: 0.25}
    assert rs[8] == pytest.approx(5.66, abs=0.005) and rs[64] == pytest.approx(2.0)
    assert standard[8] / standard[64] == 8 and rs[8] / rs[64] == pytest.approx(2.83, abs=0.005)

    # with Adam, from B = 0, doubling the scaling changes the output exactly as doubling the lr does
    def output_after_one_step(scaling, lr):
        torch.manual_seed(0)
        layer = RefLoRALinear(nn.Linear(32, 16), rank=4, alpha=4)
        layer.scaling = scaling
        opt = torch.optim.Adam([layer.lora_A, layer.lora_B], lr=lr)
        x, target = torch.randn(8, 32), torch.randn(8, 16)
        nn.functional.mse_loss(layer(x), target).backward()
        opt.step()
        with torch.no_grad():
            return layer(x) - layer.base(x)

    assert torch.allclose(output_after_one_step(2.0, 1e-3), output_after_one_step(1.0, 2e-3), atol=1e-7)


@pytest.mark.verifies("lora-targets")
def test_adapter_sizes_on_a_7b_llama():
    def count(shapes, rank, layers=32):
        return layers * sum(lora_params(RefLoRALinear(nn.Linear(i, o, device="meta"), rank=rank, alpha=rank))
                            for i, o in shapes)

    q_v = count([(4096, 4096)] * 2, rank=8)
    all_linear = count([(4096, 4096)] * 4 + [(4096, 11008)] * 2 + [(11008, 4096)], rank=16)
    assert q_v == 4_194_304  # about 4.2 M
    assert all_linear == pytest.approx(40e6, rel=0.01)  # about 40 M
    assert all_linear / 6_738_415_616 < 0.01  # tiny next to the frozen base


@pytest.mark.verifies("lora-qlora")
def test_nf4_levels_and_double_quantization():
    # NF4 as bitsandbytes ships it: 16 levels normalised to [-1, 1], an exact zero, 8 positive and 7 negative
    nf4 = torch.tensor([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
                        -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
                        0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
                        0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0], dtype=torch.float64)
    # rebuilt from normal quantiles (QLoRA's construction; offset 1 - (1/32 + 1/30) / 2)
    normal = torch.distributions.Normal(torch.tensor(0.0, dtype=torch.float64), torch.tensor(1.0, dtype=torch.float64))
    offset = 1 - 0.5 * (1 / 32 + 1 / 30)
    positive = normal.icdf(torch.linspace(offset, 0.5, 9, dtype=torch.float64)[:-1])
    negative = -normal.icdf(torch.linspace(offset, 0.5, 8, dtype=torch.float64)[:-1])
    levels = torch.cat([positive, negative, torch.zeros(1, dtype=torch.float64)]).sort().values
    levels = levels / levels.max()
    assert torch.allclose(levels, nf4, atol=1e-6)
    assert ((nf4 > 0).sum(), (nf4 < 0).sum(), (nf4 == 0).sum()) == (8, 7, 1)
    # double quantization: fp32 scale per 64 weights, or an 8-bit scale per 64 plus fp32 per 256 of those
    single = 32 / 64
    double = 8 / 64 + 32 / (64 * 256)
    assert single == 0.5 and double == pytest.approx(0.127, abs=5e-4)
    assert single - double == pytest.approx(0.373, abs=5e-4)
    assert 65e9 * (single - double) / 8 / 1e9 == pytest.approx(3.0, abs=0.05)  # about 3 GB on 65 B


@pytest.mark.verifies("lora-vs-full-finetuning")
def test_lora_memory_and_compute_against_full_fine_tuning():
    from torch.utils.flop_counter import FlopCounterMode

    assert 7e9 * 16 / 1e9 == 112 and 7e9 * 2 / 1e9 == 14 and 7e9 * 0.5 / 1e9 == 3.5
    assert 40e6 * 16 / 1e9 == pytest.approx(0.64)
    torch.manual_seed(0)

    def step_flops(lora):
        layers = [nn.Linear(256, 256) for _ in range(8)]
        if lora:
            layers = [RefLoRALinear(layer, rank=8, alpha=16) for layer in layers]
        model = nn.Sequential(*layers)
        with FlopCounterMode(display=False) as counter:
            model(torch.randn(32, 256)).sum().backward()
        frozen_grads = [layer.base.weight.grad for layer in layers] if lora else []
        return counter.get_total_flops(), frozen_grads

    full, _ = step_flops(False)
    lora, frozen_grads = step_flops(True)
    assert all(g is None for g in frozen_grads)  # no gradients (and so no Adam state) for W
    assert 0.6 < lora / full < 0.72  # a third saved: the weight-gradient matmuls, not the backward
