"""Facts of questions/low-precision.yaml, checked with torch's FP8 dtypes, TF32 switches and fake quantization.

The FP8 facts are read from the dtypes themselves (all 256 codes, finfo, casts on the CPU); TF32
rounding is emulated bit by bit on float32, and the TF32 switches are flipped and restored. Each
verified single or multi question's test settles every choice it can (`# choice N` beside the
assertion, N its index in the file) and checks that the file's key is the set found true.

What rests on sources rather than on this CPU: in lowp-e5m2-not-everywhere, which operand formats
Hopper's tensor cores take (choice 0) rests on NVIDIA's H100 whitepaper (2022), that DeepSeek-V3 ran
E4M3 throughout on its technical report (2024), and a CUDA-only test
runs an E5M2 × E4M3 `torch._scaled_mm` where an FP8-capable GPU is present; in lowp-tf32-what-changes,
what the tensor cores do (choice 0) and that elementwise ops are untouched (choice 2) rest on the
PyTorch CUDA semantics notes, with a CUDA-only test for choice 0. In lowp-qat-recovers, the choices
describe what QAT is (Jacob et al., 2018); the test shows fake quantization's forward and its
straight-through gradient. Numeric questions compute their value (none copies the key) and check
that the file's tolerance takes it rounded as the prompt asks and rejects the usual slips.
"""

from __future__ import annotations

import pytest
import torch
from bankkeys import accepts, right_choices, topic_questions

TOPIC = "low-precision"
E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2


def _right(qid: str) -> set[int]:
    return right_choices(TOPIC, qid)


def _takes(qid: str, value: float, places: int) -> bool:
    """Whether the file's key and tolerance accept value written with `places` decimals."""
    return accepts(TOPIC, qid, f"{value:.{places}f}")


def _codes(dtype: torch.dtype) -> torch.Tensor:
    """Every value the 8-bit format can hold, decoded to float32, indexed by its bit pattern."""
    return torch.arange(256, dtype=torch.int32).to(torch.uint8).view(dtype).float()


def _cast(value: float, dtype: torch.dtype) -> float:
    return torch.tensor(value).to(dtype).float().item()


def _max_relative_rounding_error(dtype: torch.dtype) -> float:
    x = torch.linspace(1.0, 2.0, 100_001)[:-1] * 4.0  # normal values inside both FP8 ranges
    return ((x.to(dtype).float() - x).abs() / x).max().item()


@pytest.mark.verifies("lowp-e4m3fn-448")
def test_e4m3fn_spends_its_top_exponent_on_numbers():
    codes = _codes(E4M3)
    finite = codes[codes.isfinite()]
    top_exponent = codes[0x78:0x7F]  # S=0, exponent 1111, mantissa 000..110
    truth = {
        0: codes.isinf().sum() == 0 and codes.isnan().sum() == 2 and top_exponent.tolist() == [256, 288, 320, 352, 384, 416, 448],
        1: torch.finfo(E4M3).smallest_normal != 2.0**-6,  # a bias of 5 would make it 2^-4
        2: (codes == 0).sum() == 0,  # 0x00 and 0x80 are +0 and -0
        3: finite.min() >= 0,  # the format has negative numbers
    }
    assert finite.max() == 448 == 1.75 * 2**8
    assert truth == {0: True, 1: False, 2: False, 3: False}  # choices 0-3
    assert {i for i, t in truth.items() if t} == _right("lowp-e4m3fn-448")


@pytest.mark.verifies("lowp-e4m3fn-facts")
def test_e4m3fn_range_subnormals_and_spacing():
    codes = _codes(E4M3)
    positive = codes[(codes > 0) & codes.isfinite()].sort().values
    info = torch.finfo(E4M3)
    truth = {
        0: info.max == 448,
        1: bool(codes.isinf().any()),
        2: info.smallest_normal == 2.0**-14,
        3: positive[0].item() == 2.0**-9 and positive[0] < info.smallest_normal,
        4: positive[positive > 1][0].item() - 1 == 0.25,
    }
    assert truth == {0: True, 1: False, 2: False, 3: True, 4: False}  # choices 0-4
    assert {i for i, t in truth.items() if t} == _right("lowp-e4m3fn-facts")
    # the E5M2 side of the explanation
    assert torch.finfo(E5M2).max == 57344 and torch.finfo(E5M2).smallest_normal == 2.0**-14
    assert _codes(E5M2)[1].item() == 2.0**-16 and _codes(E5M2).isinf().sum() == 2


@pytest.mark.verifies("lowp-e4m3-round-300")
def test_300_in_e4m3():
    codes = _codes(E4M3)
    between = codes[(codes >= 256) & (codes <= 448)].sort().values
    assert (between.diff() == 32).all()
    assert _takes("lowp-e4m3-round-300", _cast(300.0, E4M3), 0)
    assert _cast(300.0, E5M2) == 320 and not _takes("lowp-e4m3-round-300", 320, 0)  # E5M2's answer
    assert not _takes("lowp-e4m3-round-300", 300, 0)  # as if the cast were exact
    # a scale does not shrink the relative error of a normal value: a power-of-two scale leaves the
    # same 4%, and over all normal values the worst case stays 1/17 whatever the scale
    for k in (-14, -6, -3, -1):  # 300 × 2^k stays normal and under 448
        scale = 2.0**k
        assert _cast(300.0 * scale, E4M3) / scale == _cast(300.0, E4M3)
    assert _max_relative_rounding_error(E4M3) == pytest.approx(1 / 17, rel=1e-3)


@pytest.mark.verifies("lowp-e4m3-tiny")
def test_a_value_under_half_the_smallest_subnormal_becomes_zero():
    got = _cast(0.0009, E4M3)
    codes = _codes(E4M3)
    truth = {
        0: bool((codes == 2.0**-10).any()) and got == pytest.approx(2.0**-10),
        1: got == 2.0**-9,
        2: got == 2.0**-6,
        3: got == 0.0 and 0.0009 < 2.0**-9 / 2,
    }
    assert truth == {0: False, 1: False, 2: False, 3: True}  # choices 0-3
    assert _cast(0.001, E4M3) == 2.0**-9  # just over halfway it rounds up to the smallest subnormal
    assert {i for i, t in truth.items() if t} == _right("lowp-e4m3-tiny")


@pytest.mark.verifies("lowp-e5m2-not-everywhere")
def test_e5m2_trades_precision_for_range():
    e4, e5 = _max_relative_rounding_error(E4M3), _max_relative_rounding_error(E5M2)
    e5_codes = _codes(E5M2)
    assert torch.finfo(E5M2).smallest_normal == 2.0**-14  # choice 1's boundary
    # choice 2 speaks of normal values: a subnormal keeps fewer significant bits and can round further
    assert abs(_cast(1.5 * 2**-9, E4M3) / (1.5 * 2**-9) - 1) > 0.06
    truth = {
        1: not bool(((e5_codes > 0) & (e5_codes < torch.finfo(E5M2).smallest_normal)).any()),
        2: e4 == pytest.approx(1 / 17, rel=1e-3) and e5 == pytest.approx(1 / 9, rel=1e-3),  # 5.9% and 11.1%
        3: bool((e5_codes < 0).any()) is False,
    }
    assert truth == {1: False, 2: True, 3: False}  # choices 1, 2, 3; choice 0 rests on the whitepaper
    assert {i for i, t in truth.items() if t} == _right("lowp-e5m2-not-everywhere")


def _fp8_gpu() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 9)


@pytest.mark.verifies("lowp-e5m2-not-everywhere")
@pytest.mark.skipif(not _fp8_gpu(), reason="needs an FP8-capable GPU (Ada or Hopper)")
def test_tensor_cores_multiply_e5m2_by_e4m3():  # choice 0 is false
    a = torch.randn(32, 64, device="cuda").to(E5M2)
    b = torch.randn(32, 64, device="cuda").to(E4M3).t()
    one = torch.tensor(1.0, device="cuda")
    out = torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    expected = a.float() @ b.float()
    assert torch.allclose(out.float(), expected, rtol=2e-2, atol=1e-1)


@pytest.mark.verifies("lowp-scale-from-amax")
def test_scale_from_amax_with_a_margin():
    amax, margin = 0.035, 1
    scale = torch.finfo(E4M3).max / amax / 2**margin
    assert _takes("lowp-scale-from-amax", scale, 0) and _takes("lowp-scale-from-amax", scale, 4)
    assert not _takes("lowp-scale-from-amax", scale * 2, 0)  # the margin left out
    assert not _takes("lowp-scale-from-amax", scale / 2, 0)  # the margin applied twice
    torch.manual_seed(0)
    x = torch.randn(4096) * 0.01
    x = x / x.abs().max() * amax
    unscaled = x.to(E4M3).float()
    scaled = (x * scale).to(E4M3).float() / scale
    assert (x * scale).abs().max().item() == pytest.approx(224)  # half of 448: the margin
    err = lambda y: ((y - x).abs() / x.abs().clamp_min(1e-12)).median().item()  # noqa: E731
    assert err(scaled) < 0.04 < err(unscaled)


@pytest.mark.verifies("lowp-fp8-dtype-name")
def test_fp8_dtype_names():
    assert torch.finfo(torch.float8_e4m3fn).max == 448
    assert not _codes(torch.float8_e4m3fn).isinf().any()
    for name in ("float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"):
        assert isinstance(getattr(torch, name), torch.dtype)
    assert not hasattr(torch, "float8_e4m3")
    for spelling in ("torch.float8_e4m3fn", "Float8_E4M3FN", "dtype=torch.float8_e4m3fn", "`torch.float8_e4m3fn`"):
        assert accepts(TOPIC, "lowp-fp8-dtype-name", spelling), spelling
    for wrong in ("torch.float8_e5m2", "float8_e4m3", "torch.float8_e4m3fnuz"):
        assert not accepts(TOPIC, "lowp-fp8-dtype-name", wrong), wrong


@pytest.mark.verifies("lowp-formats-by-max")
def test_formats_ordered_by_largest_value():
    items = topic_questions(TOPIC)["lowp-formats-by-max"].items
    dtypes = [getattr(torch, name.removeprefix("torch.")) for name in items]
    assert sorted(dtypes, key=lambda d: torch.finfo(d).max) == dtypes
    assert torch.finfo(torch.float8_e5m2).max < torch.finfo(torch.float16).max


@pytest.fixture
def restore_matmul_precision():
    saved = (torch.get_float32_matmul_precision(), torch.backends.cudnn.allow_tf32)
    yield
    torch.set_float32_matmul_precision(saved[0])
    torch.backends.cudnn.allow_tf32 = saved[1]


@pytest.mark.verifies("lowp-tf32-flag-precision")
def test_allow_tf32_and_matmul_precision_are_one_switch(restore_matmul_precision):
    torch.set_float32_matmul_precision("highest")
    assert torch.backends.cuda.matmul.allow_tf32 is False
    torch.backends.cuda.matmul.allow_tf32 = True
    got = torch.get_float32_matmul_precision()
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):  # the newer switch of the explanation, same state
        assert torch.backends.cuda.matmul.fp32_precision == "tf32"
    truth = {0: got == "highest", 1: got == "medium", 2: got == "high", 3: got == "tf32"}
    assert truth == {0: False, 1: False, 2: True, 3: False}  # choices 0-3
    assert {i for i, t in truth.items() if t} == _right("lowp-tf32-flag-precision")
    torch.set_float32_matmul_precision("medium")
    assert torch.backends.cuda.matmul.allow_tf32 is True
    torch.set_float32_matmul_precision("highest")
    assert torch.backends.cuda.matmul.allow_tf32 is False
    with pytest.warns(UserWarning, match="not one of"):  # choice 3: "tf32" is not an accepted value
        torch.set_float32_matmul_precision("tf32")
    assert torch.get_float32_matmul_precision() == "highest"


def _round_to_tf32(x: torch.Tensor) -> torch.Tensor:
    """Round float32 to 10 stored mantissa bits, to nearest even, as the tensor cores round their inputs."""
    bits = x.contiguous().view(torch.int32)
    bits = bits + 0x0FFF + ((bits >> 13) & 1)
    return (bits & ~0x1FFF).view(torch.float32)


@pytest.mark.verifies("lowp-tf32-what-changes")
def test_tf32_high_precision_changes_matmuls_only(restore_matmul_precision):
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("high")
    assert torch.backends.cuda.matmul.allow_tf32 is True
    truth = {
        1: hasattr(torch, "tf32"),
        3: _round_to_tf32(torch.tensor([1e-30, 1e30])).ne(0).all().item() is False,
        4: torch.backends.cudnn.allow_tf32 is True,
    }
    assert truth == {1: False, 3: False, 4: False}  # choices 1, 3, 4
    assert torch.finfo(torch.float32).tiny < 1e-30  # TF32 keeps float32's 8 exponent bits and range
    assert _right("lowp-tf32-what-changes") == {0}  # choices 0 and 2 rest on the CUDA notes


@pytest.mark.verifies("lowp-tf32-what-changes")
@pytest.mark.skipif(not (torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0)),
                    reason="needs an Ampere-or-newer GPU")
def test_tf32_matmul_rounds_its_inputs(restore_matmul_precision):  # choice 0
    torch.manual_seed(0)
    a, b = torch.randn(512, 512, device="cuda"), torch.randn(512, 512, device="cuda")
    exact = a.double() @ b.double()
    torch.set_float32_matmul_precision("highest")
    full = a @ b
    torch.set_float32_matmul_precision("high")
    fast = a @ b
    assert fast.dtype == torch.float32
    assert (fast.double() - exact).abs().max() > 10 * (full.double() - exact).abs().max()


@pytest.mark.verifies("lowp-tf32-rounding-error")
def test_tf32_relative_rounding_error():
    x = torch.linspace(1.0, 2.0, 2**16 + 1, dtype=torch.float64).float()[:-1]
    x = torch.cat([x, x * 2.0**-20, x * 2.0**40])
    rel = ((_round_to_tf32(x).double() - x.double()).abs() / x.double()).max().item()
    assert rel <= 2.0**-11 / (1 + 2.0**-11) + 1e-12
    assert _takes("lowp-tf32-rounding-error", rel, 6) and _takes("lowp-tf32-rounding-error", rel, 9)
    assert _takes("lowp-tf32-rounding-error", 2.0**-11, 6)  # half a step, the same to three figures
    assert not _takes("lowp-tf32-rounding-error", 2 * rel, 6)  # a whole step, 2^-10
    assert not _takes("lowp-tf32-rounding-error", 2.0**-8, 6)  # bfloat16's 7 bits
    kept = _round_to_tf32(x).view(torch.int32) & 0x1FFF
    assert (kept == 0).all()  # only 10 of the 23 mantissa bits survive


@pytest.mark.verifies("lowp-int4-group-bits")
def test_group_wise_int4_bits_per_weight():
    torch.manual_seed(0)
    group = 128
    w = torch.randn(64, 1024)
    g = w.view(-1, group)
    lo, hi = g.min(dim=1, keepdim=True).values, g.max(dim=1, keepdim=True).values
    scale = (hi - lo) / 15
    zero = torch.round(-lo / scale)
    codes = torch.clamp(torch.round(g / scale) + zero, 0, 15).to(torch.uint8).flatten()
    packed = codes[0::2] | (codes[1::2] << 4)  # two 4-bit codes per byte
    stored = [packed, scale.to(torch.bfloat16), zero.to(torch.bfloat16)]
    bits = 8 * sum(t.numel() * t.element_size() for t in stored) / w.numel()
    assert _takes("lowp-int4-group-bits", bits, 2)
    assert not _takes("lowp-int4-group-bits", 4, 2)  # the group's scale and zero point forgotten
    assert not _takes("lowp-int4-group-bits", 4 + 16 / group, 2)  # the zero point forgotten
    assert not _takes("lowp-int4-group-bits", 4 + 64 / group, 2)  # fp32 scale and zero point
    restored = ((packed.repeat_interleave(2) >> torch.tensor([0, 4]).repeat(packed.numel())) & 15).float()
    assert torch.equal(restored, codes.float())
    assert 7e9 * bits / 8 / 1e9 == pytest.approx(3.72, abs=0.005)


@pytest.mark.verifies("lowp-qat-recovers")
def test_fake_quantization_and_the_straight_through_gradient():
    w = torch.nn.Parameter(torch.tensor([-3.0, 0.26, 0.74, 5.0]))
    q = torch.fake_quantize_per_tensor_affine(w, 0.5, 0, -8, 7)  # int4 codes, still float
    assert q.dtype == torch.float32 and q.tolist() == [-3.0, 0.5, 0.5, 3.5]
    upstream = torch.tensor([0.3, -0.7, 1.1, 0.9])
    q.backward(upstream)
    # choice 1: the gradient passes straight through inside the range, zero where clipped
    assert torch.equal(w.grad, torch.tensor([0.3, -0.7, 1.1, 0.0]))
    # choice 0: the gradient itself is not quantized (0.3 is not a multiple of the 0.5 step)
    assert not torch.equal(torch.round(w.grad / 0.5) * 0.5, w.grad)
    before = w.detach().clone()
    with torch.no_grad():  # a plain SGD step; torch.optim would import Dynamo, seconds for nothing here
        w -= 0.1 * w.grad
    # choices 2 and 3: the float weights are updated by ordinary float arithmetic
    assert w.dtype == torch.float32 and not torch.equal(w.detach(), before)
    assert _right("lowp-qat-recovers") == {1}


def _to_fp8(t: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-tensor current scaling: amax lands on the format's largest value. Returns the FP8
    tensor and its scale."""
    scale = torch.finfo(dtype).max / t.abs().max()
    return (t * scale).to(dtype), scale


@pytest.mark.verifies("lowp-fp8-linear-card")
def test_an_emulated_fp8_linear_forward_and_backward():
    assert torch.finfo(E4M3).max == 448 and torch.finfo(E5M2).max == 57344
    assert torch.finfo(E4M3).eps == 2**-3 and torch.finfo(E5M2).eps == 2**-2  # 3 vs 2 mantissa bits
    torch.manual_seed(0)
    x, w = torch.randn(16, 64) * 1e-3, torch.randn(32, 64) * 3.0  # activations far below E4M3's normal range
    x8, sx = _to_fp8(x, E4M3)
    w8, sw = _to_fp8(w, E4M3)
    # the GEMM multiplies the FP8 values, accumulates wide, and divides by the product of the scales
    y = (x8.float() @ w8.float().T) / (sx * sw)
    rel = ((y - x @ w.T).norm() / (x @ w.T).norm()).item()
    assert rel < 0.06  # E4M3 keeps 3 mantissa bits: a few percent
    assert (x8.float() @ w8.float().T).abs().max() > 100 * (x @ w.T).abs().max()  # without the division: wrong units
    unscaled = (x.to(E4M3).float() @ w.to(E4M3).float().T)
    assert ((unscaled - x @ w.T).norm() / (x @ w.T).norm()).item() > 2 * rel  # no scale: small x loses precision
    # gradients span many powers of two within one tensor: E5M2 keeps the small ones, E4M3 flushes them
    dy = torch.logspace(-9, 0, 200) * torch.sign(torch.randn(200))
    kept = {dt: (_to_fp8(dy, dt)[0].float() != 0).float().mean().item() for dt in (E4M3, E5M2)}
    assert kept[E5M2] > kept[E4M3] + 0.2
    # dX = dY · W and dW = dYᵀ · X, each from FP8 operands and the same division
    dy = torch.randn(16, 32) * 1e-3
    dy8, sdy = _to_fp8(dy, E5M2)
    dx = (dy8.float() @ w8.float()) / (sdy * sw)
    dw = (dy8.float().T @ x8.float()) / (sdy * sx)
    assert ((dx - dy @ w).norm() / (dy @ w).norm()).item() < 0.1
    assert ((dw - dy.T @ x).norm() / (dy.T @ x).norm()).item() < 0.1
