"""The question bank's facts that differ on CUDA, or that only CUDA can show, checked on a GPU.

tests/facts settles every fact on the CPU, and its few CUDA-gated tests (amp-cuda-fp32-ops,
amem-dropout-saves, amem-save-on-cpu, comp-cuda-graph-static, comp-sync-ops, lowp-tf32-what-changes,
lowp-e5m2-not-everywhere) run on a GPU too (benchmarks/gpu/run.sh selects them). This module adds the
CUDA side of what the CPU tests could only show half of: CUDA autocast's op lists as the autocast op
reference of PyTorch's `torch.amp` documentation gives them, and torch's ATen/autocast_mode.h holds
them (the CPU keeps softmax, layer_norm, exp in low precision; CUDA does not), the deprecated
torch.cuda.amp entry points doing real work on CUDA, GradScaler("cuda") as the bank's questions use
it, and the host-device syncs that `.item()` and GradScaler cost.
"""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA facts: this machine has no CUDA GPU "
                                "(benchmarks/gpu/run.sh runs them on one)")

DEV = "cuda"
LOW = [torch.float16, torch.bfloat16]


def bf16_ok(dtype) -> bool:
    return dtype != torch.bfloat16 or torch.cuda.is_bf16_supported()


@pytest.fixture
def acts():
    """float16-or-bfloat16 activations made the way the bank's questions make them: by a linear layer
    inside the autocast region."""
    torch.manual_seed(0)
    x = torch.randn(4, 8, 16, device=DEV)
    w = torch.randn(16, 16, device=DEV) / 4
    return x, w


@pytest.mark.parametrize("dtype", LOW, ids=["fp16", "bf16"])
def test_cuda_autocast_runs_the_tensor_core_ops_in_low_precision(acts, dtype):
    if not bf16_ok(dtype):
        pytest.skip("this GPU has no bfloat16")
    x, w = acts
    x2 = x.reshape(-1, 16)
    img = torch.randn(2, 3, 8, 8, device=DEV)
    conv1, conv2 = nn.Conv1d(3, 4, 3).to(DEV), nn.Conv2d(3, 4, 3).to(DEV)
    conv3, convt = nn.Conv3d(3, 4, 3).to(DEV), nn.ConvTranspose2d(3, 4, 3).to(DEV)
    prelu, lstm, gru = nn.PReLU().to(DEV), nn.LSTMCell(16, 16).to(DEV), nn.GRUCell(16, 16).to(DEV)
    with torch.autocast(DEV, dtype=dtype):
        outs = {
            "linear": F.linear(x, w), "matmul": x @ w, "mm": torch.mm(x2, w), "bmm": torch.bmm(x, x.transpose(1, 2)),
            "addmm": torch.addmm(torch.zeros(16, device=DEV), x2, w),
            "baddbmm": torch.baddbmm(torch.zeros(4, 8, 8, device=DEV), x, x.transpose(1, 2)),
            "conv1d": conv1(img[:, :, 0]), "conv2d": conv2(img), "conv3d": conv3(img.unsqueeze(2).expand(-1, -1, 3, -1, -1)),
            "conv_transpose2d": convt(img), "einsum": torch.einsum("bij,jk->bik", x, w), "prelu": prelu(x),
            "lstm_cell": lstm(x2)[0], "gru_cell": gru(x2),
            "scaled_dot_product_attention": F.scaled_dot_product_attention(x.unsqueeze(1), x.unsqueeze(1),
                                                                           x.unsqueeze(1)),
        }
    wrong = {op: out.dtype for op, out in outs.items() if out.dtype != dtype}
    assert wrong == {}


@pytest.mark.verifies("amp-cuda-fp32-ops", "amp-cpu-autocast-dtypes")
@pytest.mark.parametrize("dtype", LOW, ids=["fp16", "bf16"])
def test_cuda_autocast_runs_the_range_sensitive_ops_in_float32(acts, dtype):
    if not bf16_ok(dtype):
        pytest.skip("this GPU has no bfloat16")
    x, w = acts
    target = torch.randn(4, 8, 16, device=DEV)
    classes = torch.randint(0, 16, (32,), device=DEV)
    with torch.autocast(DEV, dtype=dtype):
        h = F.linear(x, w)
        assert h.dtype == dtype
        pos = h.abs() + 1
        h2 = h.reshape(-1, 16)
        outs = {
            "exp": torch.exp(h), "log": torch.log(pos), "pow": torch.pow(h, 2), "reciprocal": torch.reciprocal(pos),
            "rsqrt": torch.rsqrt(pos), "softplus": F.softplus(h), "layer_norm": F.layer_norm(h, (16,)),
            "group_norm": F.group_norm(h.transpose(1, 2), 2), "cosine_similarity": F.cosine_similarity(h, h, dim=-1),
            "nll_loss": F.nll_loss(h2, classes), "mse_loss": F.mse_loss(h, target), "l1_loss": F.l1_loss(h, target),
            "smooth_l1_loss": F.smooth_l1_loss(h, target), "huber_loss": F.huber_loss(h, target),
            "kl_div": F.kl_div(h, target, reduction="batchmean"),
            "binary_cross_entropy_with_logits": F.binary_cross_entropy_with_logits(h, target.sigmoid()),
            "cdist": torch.cdist(h, h), "logsumexp": torch.logsumexp(h, dim=-1),
            "cross_entropy": F.cross_entropy(h2, classes),
            # float32 unless a dtype is given
            "softmax": torch.softmax(h, dim=-1), "log_softmax": torch.log_softmax(h, dim=-1), "sum": h.sum(),
            "prod": h.prod(dim=-1), "cumsum": h.cumsum(dim=-1), "cumprod": h.cumprod(dim=-1),
            "linalg_vector_norm": torch.linalg.vector_norm(h, dim=-1),
        }
        given = {"softmax": torch.softmax(h, dim=-1, dtype=dtype), "sum": h.sum(dtype=dtype),
                 "cumsum": h.cumsum(dim=-1, dtype=dtype)}
        relu = torch.relu(h)
    wrong = {op: out.dtype for op, out in outs.items() if out.dtype != torch.float32}
    assert wrong == {}
    assert {op: out.dtype for op, out in given.items()} == {op: dtype for op in given}
    assert relu.dtype == dtype  # on no list: the input's dtype
    # the CPU keeps these in low precision (amp-cpu-autocast-dtypes): the difference the bank teaches
    with torch.autocast("cpu", dtype=torch.bfloat16):
        hc = F.linear(x.cpu(), w.cpu())
        assert (hc.softmax(-1).dtype, F.layer_norm(hc, (16,)).dtype, hc.exp().dtype) == (torch.bfloat16,) * 3


def test_cuda_autocast_promotes_mixed_inputs_to_the_widest(acts):
    x, w = acts
    v32 = torch.randn(16, device=DEV)
    m32 = torch.randn(32, 16, device=DEV)
    idx = torch.randint(0, 32, (32, 16), device=DEV)
    with torch.autocast(DEV, dtype=torch.float16):
        h = F.linear(x, w).reshape(-1, 16)
        outs = {
            "addcmul": torch.addcmul(m32, h, h), "addcdiv": torch.addcdiv(m32, h, h.abs() + 1),
            "atan2": torch.atan2(h, m32), "dot": torch.dot(h[0], v32),
            "tensordot": torch.tensordot(h, m32.t(), dims=1),
            "bilinear": F.bilinear(h, m32, torch.randn(3, 16, 16, device=DEV)),
            "scatter_add": torch.scatter_add(m32, 0, idx, h),
            "index_put": m32.index_put((torch.arange(4, device=DEV),), h[:4]),
        }
        same = torch.addcmul(h, h, h)
    assert {op: out.dtype for op, out in outs.items() if out.dtype != torch.float32} == {}
    assert same.dtype == torch.float16  # the widest of float16 inputs is float16


def test_binary_cross_entropy_refuses_cuda_autocast(acts):
    x, w = acts
    with torch.autocast(DEV, dtype=torch.float16):
        p = torch.sigmoid(F.linear(x, w))
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(p, torch.rand_like(p))


@pytest.mark.verifies("amp-autocast-state-cpu")
def test_autocast_state_and_default_dtype_on_cuda(acts):
    x, w = acts
    with torch.autocast(DEV):
        h = F.linear(x, w)
        state = (torch.is_autocast_enabled(), torch.is_autocast_enabled(DEV), torch.is_autocast_enabled("cpu"))
    assert h.dtype == torch.float16 and state == (True, True, False)  # no-argument form: CUDA's
    lin = nn.Linear(16, 16).to(DEV)
    with torch.autocast(DEV, dtype=torch.float16):
        out = lin(x)
    out.float().sum().backward()
    # parameters and their gradients stay float32
    assert lin.weight.dtype == torch.float32 and lin.weight.grad.dtype == torch.float32


@pytest.mark.verifies("amp-deprecated-cuda-amp")
def test_torch_cuda_amp_works_on_cuda_but_is_deprecated(acts):
    """The CPU test settles the no-CUDA half of choice 1; here the other half: with CUDA they are live."""
    x, w = acts
    with pytest.warns(FutureWarning):
        scaler = torch.cuda.amp.GradScaler()
    with pytest.warns(FutureWarning):
        ctx = torch.cuda.amp.autocast()
    assert scaler.is_enabled()
    loss = torch.tensor(3.0, device=DEV)
    assert scaler.scale(loss).item() == 3.0 * 65536
    with ctx:
        assert F.linear(x, w).dtype == torch.float16


def _iteration(scaler, opt, param, *, overflow: bool):
    opt.zero_grad()
    scaler.scale((param * 2.0).sum()).backward()
    if overflow:
        param.grad[0] = float("inf")
    stepped = scaler.step(opt)
    scaler.update()
    return stepped


@pytest.mark.verifies("amp-scale-after-overflows")
def test_default_cuda_scale_after_five_overflows():
    scaler = torch.amp.GradScaler(DEV)
    p = nn.Parameter(torch.ones(3, device=DEV))
    opt = torch.optim.SGD([p], lr=0.1)
    for _ in range(5):
        _iteration(scaler, opt, p, overflow=True)
    assert scaler.get_scale() == 2048.0
    assert torch.equal(p.detach(), torch.ones(3, device=DEV))


@pytest.mark.verifies("nan-scaler-skip-signal")
def test_a_skipped_cuda_step_shows_only_in_the_scale():
    scaler = torch.amp.GradScaler(DEV, init_scale=1024.0)
    p = nn.Parameter(torch.ones(3, device=DEV))
    opt = torch.optim.SGD([p], lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # choice 3: false, no warning
        for overflow in (False, True, False):
            before, weights = scaler.get_scale(), p.detach().clone()
            returned = _iteration(scaler, opt, p, overflow=overflow)
            assert returned is None  # choice 0: false, the same None whether it stepped or not
            assert (scaler.get_scale() < before) == overflow  # choice 1: true
            assert torch.equal(p.detach(), weights) == overflow  # choice 2: false, a skip leaves the weights
            assert opt.param_groups[0]["lr"] == 0.1  # choice 4: false
            assert torch.isfinite(p).all()


def test_unscaling_float16_gradients_raises_on_cuda():
    p = nn.Parameter(torch.ones(4, device=DEV, dtype=torch.float16))
    opt = torch.optim.SGD([p], lr=0.1)
    scaler = torch.amp.GradScaler(DEV)
    scaler.scale(p.float().sum()).backward()
    with pytest.raises(ValueError, match="FP16 gradients"):
        scaler.unscale_(opt)


@pytest.mark.verifies("comp-item-sync")
def test_item_syncs_and_a_device_sum_does_not():
    x = torch.randn(1024, 1024, device=DEV)
    loss = (x @ x).square().mean()
    running = torch.zeros((), device=DEV)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        running += loss.detach()  # stays on the device: no wait
        with pytest.raises(RuntimeError, match="synchroniz"):
            loss.item()  # choice 0: the host waits for the GPU
    finally:
        torch.cuda.set_sync_debug_mode("default")


def test_grad_scaler_step_waits_for_the_gpu_once_a_step():
    """Why a float16 loop keeps one sync a step even with its losses summed on the device: scaler.step
    reads the inf check on the host before it decides to call optimizer.step (the bench's syncs/step)."""
    lin = nn.Linear(64, 64).to(DEV)
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(DEV)
    x = torch.randn(32, 64, device=DEV)
    with torch.autocast(DEV, dtype=torch.float16):
        loss = lin(x).float().square().mean()
    scaler.scale(loss).backward()
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        with pytest.raises(RuntimeError, match="synchroniz"):
            scaler.step(opt)
    finally:
        torch.cuda.set_sync_debug_mode("default")


@pytest.mark.verifies("oid-fused-keyword")
def test_fused_adamw_runs_on_cuda_and_matches_the_default():
    torch.manual_seed(0)
    a, b = nn.Linear(256, 256).to(DEV), nn.Linear(256, 256).to(DEV)
    b.load_state_dict(a.state_dict())
    opt_a = torch.optim.AdamW(a.parameters(), lr=1e-3)
    opt_b = torch.optim.AdamW(b.parameters(), lr=1e-3, fused=True)
    for _ in range(5):
        x = torch.randn(64, 256, device=DEV)
        for model, opt in ((a, opt_a), (b, opt_b)):
            opt.zero_grad()
            model(x).square().mean().backward()
            opt.step()
    for pa, pb in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(pa, pb, rtol=1e-5, atol=1e-6)
