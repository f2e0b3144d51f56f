"""Facts taught by questions/mixed-precision.yaml, checked against torch.autocast and GradScaler.

Each single or multi question's test settles every choice (`# choice N` beside the assertion, N
its index in the file) and then checks that the file's key is exactly the set found true.
amp-cuda-fp32-ops is settled on CUDA only (skipped without a GPU); its op lists are those of the
PyTorch docs' "Automatic Mixed Precision package" page. The cards' tests run on CPU autocast and
GradScaler("cpu"); what only a GPU shows (the CUDA float32 op list, tensor-core throughput from
NVIDIA's A100 datasheet, that is_bf16_supported() counts emulated bfloat16, read from its
signature) rests on the docs and the source.
"""

import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from bankkeys import right_choices, topic_questions

TOPIC = "mixed-precision"



def _scaler_iteration(scaler, opt, param, *, overflow: bool) -> None:
    """One scale/backward/step/update iteration; `overflow` puts an inf into the gradient."""
    opt.zero_grad()
    scaler.scale((param * 2.0).sum()).backward()
    if overflow:
        param.grad[0] = float("inf")
    scaler.step(opt)
    scaler.update()


@pytest.mark.verifies("amp-deprecated-cuda-amp")
def test_torch_cuda_amp_is_deprecated_and_inert_on_cpu_tensors():
    # choices 0 and 1: the warning is a FutureWarning that points to the device-generic torch.amp API
    with pytest.warns(FutureWarning, match=r"torch\.amp\.GradScaler\('cuda'"):
        scaler = torch.cuda.amp.GradScaler()  # choice 2: false, constructing it does not raise
    with pytest.warns(FutureWarning, match=r"torch\.amp\.autocast\('cuda'"):
        ctx = torch.cuda.amp.autocast()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "CUDA is not available" on a machine without a GPU
        torch.amp.GradScaler("cuda")  # choice 0: false, the replacement serves CUDA itself
    with ctx:
        # choice 3: false. Never CPU autocast: CPU ops stay float32
        assert not torch.is_autocast_enabled("cpu")
        assert nn.Linear(4, 4)(torch.randn(2, 4)).dtype == torch.float32
    if not torch.cuda.is_available():
        # choice 1: true. Without CUDA the scaler disables itself and scaling is a no-op
        assert not scaler.is_enabled()
        loss = torch.tensor(3.0)
        assert scaler.scale(loss) is loss
        assert scaler.get_scale() == 1.0
    assert right_choices(TOPIC, "amp-deprecated-cuda-amp") == {1}


@pytest.mark.verifies("amp-scale-after-overflows")
def test_default_scale_after_five_overflows():
    scaler = torch.amp.GradScaler("cpu")
    assert (scaler.get_scale(), scaler.get_backoff_factor(), scaler.get_growth_factor(),
            scaler.get_growth_interval()) == (65536.0, 0.5, 2.0, 2000)
    p = nn.Parameter(torch.ones(3))
    opt = torch.optim.SGD([p], lr=0.1)
    for _ in range(5):
        _scaler_iteration(scaler, opt, p, overflow=True)
    assert scaler.get_scale() == topic_questions(TOPIC)["amp-scale-after-overflows"].answer
    assert torch.equal(p.detach(), torch.ones(3))  # every one of those steps was skipped


@pytest.mark.verifies("amp-master-weights-card")
def test_small_updates_vanish_in_16_bit():
    one16 = torch.tensor(1.0, dtype=torch.float16)
    one_bf = torch.tensor(1.0, dtype=torch.bfloat16)
    assert (one16 + 1e-4).item() == 1.0
    assert (one_bf + 1e-3).item() == 1.0
    assert (torch.tensor(1.0) + 1e-4).item() != 1.0
    assert torch.tensor(1e-8, dtype=torch.float16).item() == 0.0  # Adam's default eps
    # autocast keeps the parameters float32 and the optimizer updates them in float32
    lin = nn.Linear(4, 4)
    opt = torch.optim.SGD(lin.parameters(), lr=1e-4)
    before = lin.weight.detach().clone()
    with torch.autocast("cpu", dtype=torch.float16):
        out = lin(torch.ones(2, 4))
    assert out.dtype == torch.float16
    out.float().sum().backward()
    opt.step()
    assert lin.weight.dtype == torch.float32 and lin.weight.grad.dtype == torch.float32
    assert not torch.equal(lin.weight.detach(), before)


@pytest.mark.verifies("amp-autocast-state-cpu")
def test_autocast_state_on_cpu():
    lin = nn.Linear(8, 8)
    x = torch.randn(4, 8)
    assert torch.get_autocast_dtype("cpu") == torch.bfloat16
    assert torch.get_autocast_dtype("cuda") == torch.float16
    with torch.autocast("cpu"):
        y = lin(x)
        printed = (y.dtype, torch.is_autocast_enabled(), torch.is_autocast_enabled("cpu"))
    assert printed == (torch.bfloat16, False, True)  # choice 2: true
    assert printed != (torch.bfloat16, True, True)  # choice 0: false
    assert printed != (torch.float16, False, True)  # choice 1: false
    assert printed != (torch.bfloat16, False, False)  # choice 3: false
    assert right_choices(TOPIC, "amp-autocast-state-cpu") == {2}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.verifies("amp-cuda-fp32-ops")
def test_cuda_autocast_float32_ops():
    torch.manual_seed(0)
    dev = "cuda"
    x = torch.randn(2, 8, 16, device=dev)
    w = torch.randn(16, 16, device=dev)
    target = torch.randn(2, 8, 16, device=dev)
    with torch.autocast("cuda", dtype=torch.float16):
        h = F.linear(x, w)
        assert h.dtype == torch.float16
        assert torch.softmax(h, dim=-1).dtype == torch.float32  # choice 0: true
        assert F.layer_norm(h, (16,)).dtype == torch.float32  # choice 1: true
        assert F.mse_loss(h, target).dtype == torch.float32  # choice 2: true
        assert torch.exp(h).dtype == torch.float32  # choice 3: true
        assert F.linear(h, w).dtype == torch.float16  # choice 4: false
        assert torch.bmm(h, h.transpose(1, 2)).dtype == torch.float16  # choice 5: false
        q = h.unsqueeze(1)
        assert F.scaled_dot_product_attention(q, q, q).dtype == torch.float16  # choice 6: false
        assert torch.relu(h).dtype == torch.float16  # choice 7: false
    assert right_choices(TOPIC, "amp-cuda-fp32-ops") == {0, 1, 2, 3}


@pytest.mark.verifies("amp-step-order")
def test_unscale_before_clip_and_step_does_not_unscale_again():
    torch.manual_seed(0)
    model = nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    # a modest scale: with the default 2**16 this fp16 backward overflows and the step is skipped
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    with torch.autocast("cpu", dtype=torch.float16):
        loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()

    scaled_norm = torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in model.parameters()]))
    scaler.unscale_(opt)
    true_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.01)
    # clipping after unscale_ sees the true norm, not one `scale` times larger
    assert true_norm.item() == pytest.approx(scaled_norm.item() / 1024.0, rel=1e-5)
    assert true_norm.item() > 0.01
    clipped = [p.grad.clone() for p in model.parameters()]
    before = [p.detach().clone() for p in model.parameters()]
    scaler.step(opt)
    # step applied the clipped gradients as they were: no second division by the scale
    for p, b, g in zip(model.parameters(), before, clipped):
        torch.testing.assert_close(p.detach(), b - 0.1 * g)
    with pytest.raises(RuntimeError, match="after step"):
        scaler.unscale_(opt)
    scaler.update()
    assert scaler.get_scale() == 1024.0  # clean step: no backoff

    # the wrong order, clipping before unscale_: the scaled norm (S times the true one) is clipped,
    # so after unscaling the norm is max_norm / S, not the smaller of the true norm and max_norm
    def norm_after(max_norm: float, clip_first: bool) -> tuple[float, float]:
        opt.zero_grad()
        wrong = torch.amp.GradScaler("cpu", init_scale=1024.0)
        with torch.autocast("cpu", dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        wrong.scale(loss).backward()
        if clip_first:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_norm)
        wrong.unscale_(opt)
        true_norm = float("nan")
        if not clip_first:
            true_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_norm).item()
        got = torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in model.parameters()])).item()
        return got, true_norm

    _, true_norm = norm_after(1e9, clip_first=False)
    for max_norm in (0.01, 2 * true_norm):  # the true norm above max_norm, then below it
        right, _ = norm_after(max_norm, clip_first=False)
        wrong, _ = norm_after(max_norm, clip_first=True)
        assert right == pytest.approx(min(true_norm, max_norm), rel=1e-3)
        assert wrong == pytest.approx(max_norm / 1024.0, rel=1e-3)


@pytest.mark.verifies("amp-cpu-autocast-dtypes")
def test_cpu_autocast_output_dtypes():
    torch.manual_seed(0)
    lin = nn.Linear(16, 16)
    x = torch.randn(4, 16)
    t = torch.randint(0, 16, (4,))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = lin(x)
        a = h.softmax(-1)
        b = F.layer_norm(h, (16,))
        c = F.cross_entropy(h, t)
        d = h + x
        e = h.exp()
    assert h.dtype == torch.bfloat16
    assert a.dtype == torch.bfloat16  # choice 0: true
    assert b.dtype == torch.bfloat16  # choice 1: true
    assert c.dtype == torch.float32  # choice 2: false
    assert d.dtype == torch.float32  # choice 3: false
    assert e.dtype == torch.bfloat16  # choice 4: true
    assert right_choices(TOPIC, "amp-cpu-autocast-dtypes") == {0, 1, 4}


@pytest.mark.verifies("amp-scaler-growth-backoff")
def test_growth_and_backoff_trajectory():
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=3)
    p = nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([p], lr=0.1)
    outcomes = ["clean", "clean", "inf", "clean", "clean", "inf", "clean", "clean", "clean"]
    scales = []
    for outcome in outcomes:
        _scaler_iteration(scaler, opt, p, overflow=outcome == "inf")
        scales.append(scaler.get_scale())
    assert scales == [1024.0, 1024.0, 512.0, 512.0, 512.0, 256.0, 256.0, 256.0, 512.0]
    assert scales[-1] == topic_questions(TOPIC)["amp-scaler-growth-backoff"].answer


@pytest.mark.verifies("amp-double-unscale")
def test_second_unscale_raises():
    p = nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([p], lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale((p * 3.0).sum()).backward()
    scaler.unscale_(opt)
    assert torch.equal(p.grad, torch.full((2,), 3.0))
    with pytest.raises(RuntimeError, match="already been called on this optimizer"):
        scaler.unscale_(opt)  # choice 0: true; choice 2: false, it is no silent no-op
    assert torch.equal(p.grad, torch.full((2,), 3.0))  # choice 1: false, not divided a second time
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scaler.step(opt)  # choice 3: false, step after a manual unscale_ is fine
    torch.testing.assert_close(p.detach(), torch.full((2,), 1.0 - 0.1 * 3.0))
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()
    assert right_choices(TOPIC, "amp-double-unscale") == {0}


# --- the cards ---


def _cast(value: float, dtype: torch.dtype) -> float:
    return torch.tensor(value, dtype=torch.float64).to(dtype).item()


@pytest.mark.verifies("amp-master-weights-card")
def test_relative_size_of_an_update_that_rounds_away():
    """Below 2^-12 (float16) or 2^-9 (bfloat16) of the weight an update always vanishes; above twice
    that it always lands; in between it depends on where the weight sits in its binade."""
    gen = torch.Generator().manual_seed(0)
    magnitudes = 10 ** (torch.rand(5000, generator=gen, dtype=torch.float64) * 6 - 3)  # 1e-3 .. 1e3
    for dtype, k in ((torch.float16, 12), (torch.bfloat16, 9)):
        w = magnitudes.to(dtype).to(torch.float64)
        for sign in (1.0, -1.0):
            lost = (w + sign * 0.999 * 2.0**-k * w).to(dtype).to(torch.float64)
            assert torch.equal(lost, w)
            landed = (w + sign * 1.001 * 2.0 ** -(k - 1) * w).to(dtype).to(torch.float64)
            assert (landed != w).all()
        # in between: near the bottom of a binade the update is lost, near the top it lands
        assert _cast(1.0 + 1.9 * 2.0**-k, dtype) == 1.0
        top = 2.0 - torch.finfo(dtype).eps  # the largest value below 2
        assert _cast(top + 1.1 * 2.0**-k * top, dtype) != top
    assert 2.0**-12 == pytest.approx(2.4e-4, rel=0.02) and 2.0**-9 == pytest.approx(1.95e-3, rel=0.01)


@pytest.mark.verifies("amp-autocast-card")
def test_what_autocast_does_and_does_not_do_on_cpu():
    torch.manual_seed(0)
    lin = nn.Linear(16, 16)
    x = torch.randn(8, 16, requires_grad=True)
    a, b = torch.randn(8, 16), torch.randn(16, 16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert torch.is_autocast_enabled("cpu") and not torch.is_autocast_enabled()
        assert torch.is_autocast_cache_enabled()  # casts of the weights are cached in the block
        y = lin(x)
        assert y.dtype == torch.bfloat16  # matmul-like ops run in low precision
        assert (y + torch.randn(8, 16)).dtype == torch.float32  # plain type promotion
        # CPU lists: softmax, layer_norm, exp keep bfloat16; losses return float32
        assert torch.softmax(y, -1).dtype == F.layer_norm(y, (16,)).dtype == y.exp().dtype == torch.bfloat16
        assert F.cross_entropy(y, torch.zeros(8, dtype=torch.long)).dtype == torch.float32
        assert F.mse_loss(y, torch.zeros(8, 16)).dtype == torch.float32
        # not touched: float64, in-place ops, and an explicit dtype= is respected
        assert lin.double()(x.double()).dtype == torch.float64
        lin.float()
        out_of_place = a @ b
        in_place = torch.zeros(8, 16).addmm_(a, b)
        assert torch.softmax(y, -1, dtype=torch.float32).dtype == torch.float32
    assert out_of_place.dtype == torch.bfloat16 and in_place.dtype == torch.float32
    assert torch.equal(in_place, torch.zeros(8, 16).addmm_(a, b))  # computed in float32
    assert not torch.equal(out_of_place.float(), a @ b)
    assert torch.get_autocast_dtype("cpu") == torch.bfloat16 and torch.get_autocast_dtype("cuda") == torch.float16
    # backward outside the block: activations' gradients in the forward's dtype, parameters' in float32
    grads = []
    y.register_hook(grads.append)
    y.float().sum().backward()
    assert grads[0].dtype == torch.bfloat16
    assert lin.weight.dtype == lin.weight.grad.dtype == torch.float32
    assert x.grad.dtype == torch.float32


@pytest.mark.verifies("amp-loss-scaling-card")
def test_loss_scaling_rescues_float16_gradients():
    f16 = torch.finfo(torch.float16)
    assert f16.tiny == 2.0**-14 == pytest.approx(6.1e-5, rel=0.01)  # below: subnormal
    assert _cast(2.0**-14 * 0.75, torch.float16) == 0.75 * 2.0**-14  # subnormals still hold values...
    assert _cast(3.1e-8, torch.float16) == 2.0**-24  # ...down to 2^-24 = 6e-8
    assert _cast(2.9e-8, torch.float16) == 0.0  # below about 3e-8 (2^-25) they become 0
    # a float16 backward: tiny gradients underflow to 0 unless the loss is scaled
    torch.manual_seed(0)
    lin = nn.Linear(8, 8)
    x = torch.randn(4, 8)

    def backward(scaler):
        lin.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            y = lin(x)
        flowing = []
        y.register_hook(flowing.append)
        loss = y.float().sum() * 1e-9
        (scaler.scale(loss) if scaler else loss).backward()
        return flowing[0], lin.weight.grad.clone()

    flowing, grad = backward(None)
    assert flowing.dtype == torch.float16 and flowing.abs().max() == 0 and grad.abs().max() == 0
    scaler = torch.amp.GradScaler("cpu")
    assert scaler.get_scale() == 65536.0
    assert (scaler._backoff_factor, scaler._growth_factor, scaler._growth_interval) == (0.5, 2.0, 2000)
    flowing, grad = backward(scaler)
    assert flowing.abs().min() > 0
    assert lin.weight.dtype == grad.dtype == torch.float32  # .grad is float32; the underflow was upstream
    assert torch.allclose(grad / 65536.0, x.sum(0).expand(8, 8) * 1e-9, rtol=2e-3)
    # an inf skips the step and halves the scale; the step returns None either way
    param = nn.Parameter(torch.ones(1))
    opt = torch.optim.SGD([param], lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=8.0, growth_interval=3)
    results = []
    for overflow in (True, False, False, False):
        opt.zero_grad()
        scaler.scale((param * (float("inf") if overflow else 1.0)).sum()).backward()
        results.append((scaler.step(opt), param.item()))
        scaler.update()
        if overflow:
            assert scaler.get_scale() == 4.0 and param.item() == 1.0  # skipped, scale halved
    assert [r for r, _ in results] == [None] * 4
    assert scaler.get_scale() == 8.0  # doubled after growth_interval clean steps
    # bfloat16 keeps float32's exponent: the same tiny values are no problem
    assert _cast(1e-30, torch.bfloat16) == pytest.approx(1e-30, rel=1e-2)


@pytest.mark.verifies("amp-bf16-recipe-card")
def test_bf16_recipe():
    import inspect

    # one code path: a disabled scaler is transparent
    scaler = torch.amp.GradScaler("cuda", enabled=False)
    param = nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([param], lr=0.5)
    loss = (param * 3.0).sum()
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0
    loss.backward()
    scaler.unscale_(opt)
    assert torch.equal(param.grad, torch.full((2,), 3.0))  # not divided by anything
    assert scaler.step(opt) is None and torch.equal(param.detach(), torch.full((2,), -0.5))
    scaler.update()
    assert scaler.get_scale() == 1.0
    # is_bf16_supported counts emulation by default
    assert inspect.signature(torch.cuda.is_bf16_supported).parameters["including_emulation"].default is True
    # 8 significant bits: weights themselves in bfloat16 lose small updates
    assert (torch.tensor(1.0, dtype=torch.bfloat16) + 1e-3).item() == 1.0
    assert torch.finfo(torch.bfloat16).eps == 2.0**-7 and torch.finfo(torch.float16).eps == 2.0**-10
    # range: float32's, so no overflow at 65504 (which float16 turns into inf)
    assert _cast(70000.0, torch.bfloat16) == pytest.approx(70000.0, rel=1e-2)
    assert _cast(70000.0, torch.float16) == float("inf")


@pytest.mark.verifies("amp-memory-speed-card")
def test_autocast_halves_saved_activations_not_parameter_memory():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))
    x = torch.randn(512, 64)
    param_ptrs = {p.data_ptr() for p in model.parameters()}

    def saved(autocast):
        found = []

        def pack(t):
            found.append(t)
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                out = model(x)
        return found, out

    plain, _ = saved(False)
    mixed, out = saved(True)
    act = lambda ts: sum(t.numel() * t.element_size() for t in ts if t.shape[0] == 512)
    assert act(mixed) * 2 == act(plain)  # the saved activations: exactly half the bytes
    weights_plain = [t for t in plain if t.shape[0] != 512]
    weights_mixed = [t for t in mixed if t.shape[0] != 512]
    assert all(t.data_ptr() in param_ptrs for t in weights_plain)  # float32: the parameter itself
    assert all(t.dtype == torch.bfloat16 and t.data_ptr() not in param_ptrs for t in weights_mixed)  # extra copies
    # parameters, gradients and Adam state stay float32: 16 bytes per parameter
    opt = torch.optim.AdamW(model.parameters())
    out.float().pow(2).mean().backward()
    opt.step()
    n = sum(p.numel() for p in model.parameters())
    total = sum(p.numel() * p.element_size() + p.grad.numel() * p.grad.element_size() for p in model.parameters())
    total += sum(t.numel() * t.element_size() for s in opt.state.values() for k, t in s.items() if k != "step")
    assert total / n == 16
