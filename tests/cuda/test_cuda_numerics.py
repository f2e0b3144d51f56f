"""What only a GPU can show about mixed precision: float16 and bfloat16 matmuls really run in 16 bits
(their results carry 16-bit rounding) on tensor cores (many times float32's rate), autocast's memory
saving is in the activations and not the weights, and the grader's tolerances hold against CUDA's own
run-to-run differences."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from quizapp.bench.timing import matmul_ceiling
from quizapp.checking.loading import load_module

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA numerics: this machine has no CUDA GPU "
                                "(benchmarks/gpu/run.sh runs them on one)")

ROOT = Path(__file__).resolve().parents[2]
DEV = torch.device("cuda")
LOW = [(torch.float16, 5e-3), (torch.bfloat16, 3e-2)]  # dtype, a normwise error bound well above its rounding


@pytest.fixture
def ieee_float32():
    """float32 matmuls in full float32 (TF32 off) for the test, whatever the default."""
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    yield
    torch.set_float32_matmul_precision(before)


def rel_err(x: torch.Tensor, ref: torch.Tensor) -> float:
    return ((x.double() - ref).norm() / ref.norm()).item()


@pytest.mark.parametrize("dtype, bound", LOW, ids=["fp16", "bf16"])
def test_autocast_matmuls_really_run_in_16_bits(ieee_float32, dtype, bound):
    if dtype == torch.bfloat16 and not torch.cuda.is_bf16_supported():
        pytest.skip("this GPU has no bfloat16")
    g = torch.Generator(device=DEV).manual_seed(0)
    a = torch.randn(1024, 1024, device=DEV, generator=g)
    b = torch.randn(1024, 1024, device=DEV, generator=g)
    ref = a.double() @ b.double()
    with torch.autocast("cuda", dtype=dtype):
        c = a @ b
    assert c.dtype == dtype
    assert torch.equal(c, a.to(dtype) @ b.to(dtype))  # the same 16-bit product, operands rounded first
    err16, err32 = rel_err(c, ref), rel_err(a @ b, ref)
    assert err32 < 1e-5, err32  # IEEE float32: far under 16-bit rounding
    assert 1e-5 < err16 < bound, err16  # 16-bit operands and output: their rounding shows, and no worse


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
def test_tensor_cores_run_16_bit_matmuls_many_times_faster_than_float32(ieee_float32, dtype):
    major, minor = torch.cuda.get_device_capability()
    if major < 7 or (dtype == torch.bfloat16 and major < 8):
        pytest.skip(f"compute capability {major}.{minor} has no tensor cores for {dtype}")
    fast = matmul_ceiling(DEV, dtype, n=4096)
    slow = matmul_ceiling(DEV, torch.float32, n=4096)
    # datasheets (quizapp/bench/peaks.py): 8x (V100), 16x (A100), 15x (H100 SXM) the CUDA cores' float32
    # rate; 4x leaves room for clocks
    assert fast > 4 * slow, f"{dtype}: {fast:.0f} TFLOP/s against float32's {slow:.0f}"


def test_autocast_saves_activation_memory_not_weights():
    """amp-memory-speed-card: the activations kept for backward shrink to about half (plus the 16-bit
    weight copies autocast keeps for backward); the parameters stay float32."""
    torch.manual_seed(0)
    model = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(1024, 1024), nn.GELU())]).to(DEV)
    x = torch.randn(8192, 1024, device=DEV)
    dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16

    def kept(amp: bool) -> int:
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        with torch.autocast("cuda", dtype=dtype, enabled=amp):
            out = model(x)
        torch.cuda.synchronize()
        used = torch.cuda.memory_allocated() - base
        del out
        return used

    kept(False), kept(True)  # cuBLAS workspaces are made now, not inside a measurement
    full, half = kept(False), kept(True)
    # float32: 8 activations of 32 MiB; autocast: 8 of 16 MiB + the input's copy + 4 weight copies of 2 MiB
    assert full >= 8 * 32 * 2**20 * 0.95
    assert 0.45 < half / full < 0.7, (half, full)
    assert all(p.dtype == torch.float32 for p in model.parameters())


def checks_constant(path: Path, name: str) -> float:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return float(ast.literal_eval(node.value))
    raise LookupError(name)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
def test_repeated_cuda_runs_of_the_amp_reference_agree_within_the_graders_tolerance(dtype):
    """amp_training's checks compare the learner's epoch losses with the reference's at PARITY_RTOL; on
    CUDA, two runs of the same loop may differ (reduction order), and must by far less than that."""
    folder = ROOT / "exercises" / "amp_training"
    rtol = checks_constant(folder / "checks.py", "PARITY_RTOL")
    reference = load_module("cuda_amp_reference", folder / "reference.py")

    def losses():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)).to(DEV)
        g = torch.Generator().manual_seed(1)
        x = torch.randn(88, 16, generator=g)
        y = torch.tanh(x @ torch.randn(16, 4, generator=g)) * 0.25
        loader = [(x[i:i + 16], y[i:i + 16]) for i in range(0, 88, 16)]
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        return reference.train_with_amp(model, loader, opt, F.mse_loss, 3, device=DEV, amp_dtype=dtype)

    first, second = losses(), losses()
    worst = max(abs(a - b) / abs(b) for a, b in zip(first, second))
    assert worst <= rtol / 10, (first, second)
