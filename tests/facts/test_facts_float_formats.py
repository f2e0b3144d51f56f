"""Facts taught by questions/float-formats.yaml, checked against torch.finfo and real casts.

Each verified single or multi question's test settles every choice (`# choice N` beside the
assertion, N its index in the file) and then checks that the file's key is exactly the set of
choices found true. Numeric questions compute the keyed value themselves. The TF32 switches are
checked through the flags torch exposes (no GPU is needed to read and set them); that those flags
route float32 matmuls to TF32 tensor cores rests on the PyTorch "CUDA semantics" notes page.
The cards' hardware claims (tensor-core formats by generation, A100 throughput, FP8 recipes of
Transformer Engine and DeepSeek-V3) rest on NVIDIA's documentation and the papers; their tests
check the formats' numbers and what torch does with them.
"""


import math

import pytest
import torch
from bankkeys import right_choices, topic_questions

TOPIC = "float-formats"



def cast(value: float, dtype: torch.dtype) -> float:
    """`value` rounded to `dtype` (from float64, so the only rounding is the one to `dtype`)."""
    return torch.tensor(value, dtype=torch.float64).to(dtype).item()


@pytest.fixture
def restore_tf32_flags():
    matmul = torch.backends.cuda.matmul.allow_tf32
    cudnn = torch.backends.cudnn.allow_tf32
    precision = torch.get_float32_matmul_precision()
    yield
    torch.set_float32_matmul_precision(precision)
    torch.backends.cuda.matmul.allow_tf32 = matmul
    torch.backends.cudnn.allow_tf32 = cudnn


@pytest.mark.verifies("fmt-bf16-shares-fp32-exponent", "fmt-layouts-card")
def test_layouts_ranges_and_precision():
    f32, f16, bf16 = (torch.finfo(d) for d in (torch.float32, torch.float16, torch.bfloat16))
    # bfloat16: float32's exponent (same smallest normal, max within one bf16 step), 8 significant bits
    assert bf16.tiny == f32.tiny == 2.0**-126
    assert bf16.max == pytest.approx(3.3895313892515355e38) and bf16.max < f32.max
    assert bf16.eps == 2.0**-7 and f16.eps == 2.0**-10 and f32.eps == 2.0**-23
    # float16: 5-bit exponent
    assert f16.max == 65504.0 and f16.tiny == 2.0**-14
    # smallest subnormals: the cast of that value survives, half of it rounds to zero
    for dtype, sub in ((torch.float16, 2.0**-24), (torch.bfloat16, 2.0**-133), (torch.float32, 2.0**-149)):
        assert cast(sub, dtype) == sub
        assert cast(sub / 2, dtype) == 0.0
    assert 2.0**-24 == pytest.approx(5.96e-8, rel=1e-3)
    assert 2.0**-133 == pytest.approx(9.18e-41, rel=1e-3)
    # the two bf16 examples quoted in the card
    assert cast(257.0, torch.bfloat16) == 256.0
    assert (torch.tensor(1.0, dtype=torch.bfloat16) + 0.001).item() == 1.0


@pytest.mark.verifies("fmt-fp16-max")
def test_fp16_max():
    assert torch.finfo(torch.float16).max == 65504.0 == (2 - 2.0**-10) * 2.0**15
    assert torch.finfo(torch.float16).max == topic_questions(TOPIC)["fmt-fp16-max"].answer
    assert cast(65504.0, torch.float16) == 65504.0


@pytest.mark.verifies("fmt-fp16-overflow-boundary")
def test_fp16_overflow_boundary():
    assert cast(65504.0, torch.float16) == 65504.0  # choice 0: false
    assert cast(65519.0, torch.float16) == 65504.0  # choice 1: false
    assert cast(65520.0, torch.float16) == float("inf")  # choice 2: true
    assert cast(-65519.0, torch.float16) == -65504.0  # choice 3: false
    assert cast(1e-8, torch.float16) == 0.0  # choice 4: false, underflow, not overflow
    assert right_choices(TOPIC, "fmt-fp16-overflow-boundary") == {2}


@pytest.mark.verifies("fmt-bf16-no-loss-scaling")
def test_bf16_keeps_tiny_gradients_that_fp16_loses():
    # choice 1: true. float32's exponent: tiny gradients survive bfloat16, not float16
    assert torch.finfo(torch.bfloat16).tiny == torch.finfo(torch.float32).tiny
    assert cast(1e-20, torch.float16) == 0.0
    assert cast(1e-20, torch.bfloat16) == pytest.approx(1e-20, rel=2.0**-8)
    assert torch.finfo(torch.float16).tiny == pytest.approx(6.1e-5, rel=1e-2)
    # float16 loses gradients below ~3e-8 entirely
    assert cast(2.9e-8, torch.float16) == 0.0
    # choice 0: false. bfloat16 has fewer mantissa bits than float16
    assert torch.finfo(torch.bfloat16).eps == 2.0**-7 > torch.finfo(torch.float16).eps == 2.0**-10
    # choice 2: false. Both casts round to nearest; 3/4 of a step rounds up in each
    assert cast(1 + 0.75 * 2.0**-10, torch.float16) == 1 + 2.0**-10
    assert cast(1 + 0.75 * 2.0**-7, torch.bfloat16) == 1 + 2.0**-7
    # choice 3: false. Autocast keeps parameters (and so their grads) float32 for either dtype
    lin = torch.nn.Linear(4, 4)
    for dtype in (torch.float16, torch.bfloat16):
        lin.zero_grad()
        with torch.autocast("cpu", dtype=dtype):
            out = lin(torch.randn(2, 4))
        assert out.dtype == dtype
        out.float().sum().backward()
        assert lin.weight.grad.dtype == torch.float32
    assert right_choices(TOPIC, "fmt-bf16-no-loss-scaling") == {1}


@pytest.mark.verifies("fmt-tf32-switches")
def test_tf32_switches(restore_tf32_flags):
    torch.set_float32_matmul_precision("highest")
    assert torch.backends.cuda.matmul.allow_tf32 is False  # choice 3: false, "highest" turns TF32 off
    torch.set_float32_matmul_precision("high")
    assert torch.backends.cuda.matmul.allow_tf32 is True  # choice 1: true
    torch.set_float32_matmul_precision("highest")
    torch.backends.cuda.matmul.allow_tf32 = True
    assert torch.get_float32_matmul_precision() == "high"  # choice 4: true, the same switch
    torch.backends.cuda.matmul.allow_tf32 = False
    # choice 0: false. The cuDNN flag is a separate switch (convolutions) and does not touch matmuls
    torch.backends.cudnn.allow_tf32 = True
    assert torch.backends.cuda.matmul.allow_tf32 is False
    assert torch.get_float32_matmul_precision() == "highest"
    assert not hasattr(torch, "tf32")  # choice 2: false, no such dtype
    # choice 5: false. bf16 autocast runs the matmul in bfloat16, not in float32-with-TF32
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert (torch.randn(2, 2) @ torch.randn(2, 2)).dtype == torch.bfloat16
    assert right_choices(TOPIC, "fmt-tf32-switches") == {1, 4}


@pytest.mark.verifies("fmt-fp8-card")
def test_fp8_formats():
    e4m3, e5m2 = torch.finfo(torch.float8_e4m3fn), torch.finfo(torch.float8_e5m2)
    assert (e4m3.bits, e4m3.max, e4m3.tiny, e4m3.eps) == (8, 448.0, 2.0**-6, 2.0**-3)
    assert (e5m2.bits, e5m2.max, e5m2.tiny, e5m2.eps) == (8, 57344.0, 2.0**-14, 2.0**-2)
    assert cast(2.0**-9, torch.float8_e4m3fn) == 2.0**-9
    assert cast(2.0**-16, torch.float8_e5m2) == 2.0**-16
    # E5M2 has inf; E4M3 "fn" has none (torch saturates an overflowing cast to 448)
    assert cast(float("inf"), torch.float8_e5m2) == float("inf")
    assert cast(1e6, torch.float8_e4m3fn) == 448.0


@pytest.mark.verifies("fmt-rounding-examples")
def test_rounding_examples():
    assert torch.tensor(2049.0, dtype=torch.float16).item() == 2048.0  # choice 0: false
    assert torch.tensor(1234.567, dtype=torch.float16).item() == 1235.0  # choice 1: true
    assert torch.tensor(1234.567, dtype=torch.bfloat16).item() == 1232.0  # choice 2: false, not 1234
    assert torch.tensor(257.0, dtype=torch.bfloat16).item() == 256.0  # choice 3: true
    assert torch.tensor(0.1, dtype=torch.float16).item() == 0.0999755859375  # choice 4: false
    assert (torch.tensor(1.0, dtype=torch.bfloat16) + 0.001).item() == 1.0  # choice 5: true
    assert right_choices(TOPIC, "fmt-rounding-examples") == {1, 3, 5}


@pytest.mark.verifies("fmt-fp16-counter-stalls")
def test_fp16_counter_stalls_at_2048():
    c = torch.tensor(0.0, dtype=torch.float16)
    for _ in range(5000):
        c = c + 1
    assert c.dtype == torch.float16
    assert c.item() == 2048.0 == topic_questions(TOPIC)["fmt-fp16-counter-stalls"].answer
    b = torch.tensor(0.0, dtype=torch.bfloat16)
    for _ in range(300):
        b = b + 1
    assert b.item() == 256.0


@pytest.mark.verifies("fmt-fp16-subnormal-gradient")
def test_fp16_subnormal_gradient():
    got = torch.tensor(1e-7, dtype=torch.float32).to(torch.float16).item()  # the prompt's float32 gradient
    assert got == cast(1e-7, torch.float16)
    assert got == 2 * 2.0**-24  # choice 3: true
    assert got == pytest.approx(1.19e-7, rel=2e-3)
    assert (got - 1e-7) / 1e-7 == pytest.approx(0.19, abs=0.01)  # choice 1: false, 19% off, not 3 digits
    assert got != 0.0  # choice 0: false, no underflow to zero
    assert got < torch.finfo(torch.float16).tiny  # choice 2: false, not clamped to 6.1e-5
    assert cast(2.0**-25, torch.float16) == 0.0
    assert right_choices(TOPIC, "fmt-fp16-subnormal-gradient") == {3}


# --- the cards ---


@pytest.mark.verifies("fmt-layouts-card")
def test_layout_bits_and_decimal_digits():
    for dtype, exponent, mantissa in ((torch.float32, 8, 23), (torch.float16, 5, 10), (torch.bfloat16, 8, 7)):
        info = torch.finfo(dtype)
        assert info.bits == 1 + exponent + mantissa
        assert info.eps == 2.0**-mantissa
        assert info.tiny == 2.0 ** (2 - 2 ** (exponent - 1))
    assert torch.finfo(torch.float32).max == pytest.approx(3.40e38, rel=1e-3)
    assert torch.finfo(torch.float32).tiny == pytest.approx(1.18e-38, rel=1e-2)
    assert 2.0**-149 == pytest.approx(1.4e-45, rel=0.01) and cast(2.0**-149, torch.float32) == 2.0**-149
    # decimal digits of precision: log10 of 2^(significant bits)
    digits = {name: math.log10(2.0 ** (m + 1)) for name, m in (("f32", 23), ("f16", 10), ("bf16", 7))}
    assert digits == {"f32": pytest.approx(7.2, abs=0.05), "f16": pytest.approx(3.3, abs=0.05),
                      "bf16": pytest.approx(2.4, abs=0.05)}


@pytest.mark.verifies("fmt-tf32-card")
def test_tf32_defaults_and_switches(restore_tf32_flags):
    # defaults: TF32 off for matmuls, on for cuDNN convolutions
    assert torch.backends.cuda.matmul.allow_tf32 is False
    assert torch.get_float32_matmul_precision() == "highest"
    assert torch.backends.cudnn.allow_tf32 is True
    assert torch.backends.cudnn.conv.fp32_precision == "tf32"  # the per-backend setting agrees
    assert not hasattr(torch, "tf32")  # not a storage dtype
    torch.set_float32_matmul_precision("high")
    assert torch.backends.cuda.matmul.allow_tf32 is True
    torch.set_float32_matmul_precision("highest")
    assert torch.backends.cuda.matmul.allow_tf32 is False
    # 19 bits: 1 sign, float32's 8 exponent bits, float16's 10 mantissa bits
    assert 1 + 8 + 10 == 19 and torch.finfo(torch.float16).eps == 2.0**-10


@pytest.mark.verifies("fmt-fp16-or-bf16-card")
def test_what_goes_wrong_in_float16_and_bfloat16():
    assert cast(70000.0, torch.float16) == float("inf")
    assert cast(70000.0, torch.bfloat16) == pytest.approx(70000.0, rel=1e-2)
    assert cast(1e-8, torch.float16) == 0.0
    assert (torch.tensor(1.0, dtype=torch.bfloat16) + 0.001).item() == 1.0
    assert torch.finfo(torch.float16).eps / torch.finfo(torch.bfloat16).eps == 2.0**-3  # 3 more bits

    def pure_fp16_adam_step(grad):
        param = torch.nn.Parameter(torch.ones(1, dtype=torch.float16))
        optimizer = torch.optim.Adam([param], lr=1e-3)
        param.grad = torch.full((1,), grad, dtype=torch.float16)
        optimizer.step()
        return param.item(), optimizer.state[param]["exp_avg_sq"].item()

    # (1 - beta2) * g^2 underflows below g ~ 5.5e-3, eps is 0: the step divides by zero
    assert math.sqrt(2.0**-25 / 1e-3) == pytest.approx(5.5e-3, rel=0.01)
    for grad in (5e-3, 1e-3, 1e-4, 1e-6):
        weight, v = pure_fp16_adam_step(grad)
        assert v == 0.0 and weight == float("-inf")
    # (1 - beta1) * g underflows too below about 3e-7 (half the smallest subnormal, over 0.1): 0/0
    assert 2.0**-25 / 0.1 == pytest.approx(3e-7, rel=0.01)
    for grad in (0.0, 1e-7, 2.9e-7):
        weight, v = pure_fp16_adam_step(grad)
        assert v == 0.0 and math.isnan(weight)
    weight, v = pure_fp16_adam_step(1e-2)
    assert v > 0 and math.isfinite(weight)
