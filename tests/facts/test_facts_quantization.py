"""Facts taught by questions/quantization.yaml, checked by running torch.

Plain tensor arithmetic plus torch.fake_quantize_per_*_affine (not deprecated, unlike
torch.quantize_per_tensor and torch.ao.quantization, which warn on this build; only the test of
quant-dynamic-vs-static calls quantize_dynamic, to show that warning and the module swap, and one
test runs torch.ao's observers, to show how they pick a range and a scale).
The cards on GPTQ, AWQ, SmoothQuant and LLM.int8() re-create each method's core step from its
paper on small tensors (no lazy batching, no groups) and check the effect the card claims; the
reported accuracies and model-scale findings rest on the papers.

Each verified single question's test settles every choice (`# choice N` beside the assertion, N
its index in the file) and then checks that the file's key is the one found true. Numeric
answers are computed here and compared with the file's key. In quant-per-channel, the claim that
per-channel weight quantization leaves activations alone holds by the definition of the
quantizer (it receives the weight tensor only); the test shows the quantized weight does not
depend on any activation.
"""


import warnings

import pytest
import torch
from bankkeys import right_choices, topic_questions

TOPIC = "quantization"



def fq(x, scale, zero_point, qmin, qmax):
    return torch.fake_quantize_per_tensor_affine(x, scale, zero_point, qmin, qmax)


def codes(x, scale, zero_point, qmin, qmax):
    return torch.clamp(torch.round(x / scale) + zero_point, qmin, qmax)


@pytest.mark.verifies("quant-affine-zero-point")
def test_zero_point_for_range():
    lo, hi = -1.0, 3.0
    scale = (hi - lo) / 255
    zero_point = round(0 - lo / scale)
    assert 0 - lo / scale == pytest.approx(63.75)
    assert zero_point == topic_questions(TOPIC)["quant-affine-zero-point"].answer
    x = torch.tensor([lo, 0.0, hi])
    q = codes(x, scale, zero_point, 0, 255)
    assert q.tolist() == [0.0, 64.0, 255.0]
    xhat = fq(x, scale, zero_point, 0, 255)
    assert xhat[1].item() == 0.0                       # real zero is exact
    assert xhat[0].item() == pytest.approx(-64 * scale)
    assert xhat[0].item() == pytest.approx(-1.0039, abs=1e-4)
    dense = torch.linspace(lo, hi, 10001)
    assert (fq(dense, scale, zero_point, 0, 255) - dense).abs().max() <= scale / 2 + 1e-6


@pytest.mark.verifies("quant-symmetric-vs-asymmetric")
def test_symmetric_wastes_half_the_codes_on_relu_outputs():
    x = torch.linspace(0.0, 6.0, 10001)
    err_sym = (fq(x, 6 / 127, 0, -127, 127) - x).abs().max().item()
    err_asym = (fq(x, 6 / 255, 0, 0, 255) - x).abs().max().item()
    # choice 3: true
    assert err_sym == pytest.approx(0.0236, abs=1e-4)
    assert err_asym == pytest.approx(0.0118, abs=1e-4)
    assert err_sym / err_asym == pytest.approx(2.0, rel=0.01)
    assert (codes(x, 6 / 127, 0, -127, 127) < 0).sum() == 0   # negative codes never used
    assert err_sym != pytest.approx(err_asym, rel=0.1)  # choice 0: false, not the same error
    # both represent zero exactly
    zero = torch.zeros(1)
    assert fq(zero, 6 / 127, 0, -127, 127).item() == 0.0
    assert fq(zero, 6 / 255, 0, 0, 255).item() == 0.0  # choice 2: false, asymmetric keeps 0 exact
    assert err_sym > err_asym  # choice 1: false, symmetric is the less accurate one here
    assert right_choices(TOPIC, "quant-symmetric-vs-asymmetric") == {3}


@pytest.mark.verifies("quant-per-channel")
def test_per_channel_beats_per_tensor_with_one_large_channel():
    torch.manual_seed(0)
    w = torch.randn(4, 64) * 0.01
    w[0] *= 100                                       # one output channel ~100x larger
    s_tensor = w.abs().max().item() / 127
    per_tensor = fq(w, s_tensor, 0, -127, 127)
    s_chan = w.abs().amax(dim=1) / 127
    per_chan = torch.fake_quantize_per_channel_affine(
        w, s_chan, torch.zeros(4, dtype=torch.int32), 0, -127, 127)

    def rel_err(q, rows):
        return ((q[rows] - w[rows]).norm() / w[rows].norm()).item()

    small = slice(1, 4)
    # choice 0: true. The small channels occupy only a handful of levels per tensor
    assert rel_err(per_tensor, small) > 10 * rel_err(per_chan, small)
    assert codes(w[small], s_tensor, 0, -127, 127).unique().numel() <= 7
    # choice 1: false. Per-channel uses the same 8-bit code range on every row
    chan_codes = torch.round(w / s_chan[:, None])
    assert chan_codes.min() >= -127 and chan_codes.max() <= 127
    # choice 2: false. One per-tensor scale factors out of an integer matmul, applied once after it
    x = torch.randn(8, 64)
    s_x = x.abs().max().item() / 127
    qx, qw = codes(x, s_x, 0, -127, 127), codes(w, s_tensor, 0, -127, 127)
    int_result = (qx.double() @ qw.double().T) * s_x * s_tensor
    float_result = fq(x, s_x, 0, -127, 127).double() @ per_tensor.double().T
    torch.testing.assert_close(int_result, float_result, rtol=1e-5, atol=1e-6)
    # choice 3: false. The per-channel quantized weight is the same whatever the activations are
    again = torch.fake_quantize_per_channel_affine(
        w, s_chan, torch.zeros(4, dtype=torch.int32), 0, -127, 127)
    assert torch.equal(again, per_chan)
    assert right_choices(TOPIC, "quant-per-channel") == {0}


@pytest.mark.verifies("quant-int4-vs-int8")
def test_int4_step_is_17x_int8():
    torch.manual_seed(0)
    s8, s4 = 4 / 255, 4 / 15
    assert s4 / s8 == pytest.approx(topic_questions(TOPIC)["quant-int4-vs-int8"].answer)
    x = torch.rand(20000) * 4 - 1
    e8 = fq(x, s8, 64, 0, 255) - x
    e4 = fq(x, s4, round(1 / s4), 0, 15) - x
    assert (e4.abs().max() / e8.abs().max()).item() == pytest.approx(17.0, rel=0.02)
    assert (e4.pow(2).mean() / e8.pow(2).mean()).item() == pytest.approx(289.0, rel=0.05)


@pytest.mark.verifies("quant-ste")
def test_fake_quant_gradient_is_clipped_ste():
    x = torch.tensor([-20.0, 0.3, 20.0], requires_grad=True)
    y = torch.fake_quantize_per_tensor_affine(x, scale=0.1, zero_point=0, quant_min=-128, quant_max=127)
    assert torch.allclose(y, torch.tensor([-12.8, 0.3, 12.7]))
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]  # choice 2: true
    assert x.grad.tolist() != [1.0, 1.0, 1.0]  # choice 0: false
    assert x.grad.tolist() != [0.0, 0.0, 0.0]  # choice 1: false
    assert not torch.allclose(x.grad, y.detach())  # choice 3: false, that is the forward output
    assert right_choices(TOPIC, "quant-ste") == {2}


@pytest.mark.verifies("quant-memory-7b")
def test_bytes_per_parameter_and_int4_packing():
    n = 7_000_000_000
    assert n * torch.float32.itemsize / 1e9 == 28.0
    assert n * torch.float16.itemsize / 1e9 == 14.0
    assert n * torch.int8.itemsize / 1e9 == 7.0
    # int4: two 4-bit values per byte, and the packing round-trips
    torch.manual_seed(0)
    vals = torch.randint(0, 16, (1000,), dtype=torch.uint8)
    packed = vals[0::2] | (vals[1::2] << 4)
    assert packed.dtype == torch.uint8 and packed.numel() * packed.element_size() == 500
    unpacked = torch.stack([packed & 0xF, packed >> 4], dim=1).flatten()
    assert torch.equal(unpacked, vals)
    assert n * 0.5 / 1e9 == topic_questions(TOPIC)["quant-memory-7b"].answer
    assert 70_000_000_000 * 0.5 / 1e9 == 35.0
    assert 16 / 128 == 0.125  # an fp16 scale per group of 128 weights, in bits per weight


@pytest.mark.verifies("quant-activation-outlier")
def test_single_outlier_leaves_three_levels():
    x = torch.cat([torch.linspace(-1, 1, 2001), torch.tensor([100.0])])
    scale = 100 / 127
    q = codes(x, scale, 0, -127, 127)
    levels = q[:-1].unique().numel()
    assert q[:-1].unique().tolist() == [-1.0, 0.0, 1.0]
    assert levels == 3  # choice 1: true
    assert levels not in (2, 25, 255)  # choices 0, 2 and 3: false
    assert right_choices(TOPIC, "quant-activation-outlier") == {1}
    assert q[-1].item() == 127
    err = (fq(x, scale, 0, -127, 127) - x)[:-1].abs().max().item()
    assert err == pytest.approx(0.39, abs=0.01)


# --- the cards ---


def _q_sym(t, bits, dim=None):
    """Symmetric round-to-nearest: one scale per tensor, or per slice along `dim`."""
    qmax = 2 ** (bits - 1) - 1
    amax = t.abs().amax() if dim is None else t.abs().amax(dim=dim, keepdim=True)
    scale = amax / qmax
    return torch.clamp(torch.round(t / scale), -qmax - 1, qmax) * scale


@pytest.mark.verifies("quant-ptq-vs-qat")
def test_fake_quant_rounds_in_forward_and_passes_gradients_straight_through():
    scale, zp = 0.02, 0  # int8 [-128, 127]: the clipping range is [-2.56, 2.54]
    x = torch.tensor([-2.62, -2.56, -1.013, 0.3, 2.54, 2.62, 5.0], requires_grad=True)
    y = fq(x, scale, zp, -128, 127)
    # quantize then dequantize: rounded to the grid and clipped to the range, still float
    assert y.dtype == torch.float32
    assert y.tolist() == pytest.approx([-2.56, -2.56, -1.02, 0.3, 2.54, 2.54, 2.54])
    y.sum().backward()
    # straight-through estimator: 1 inside the clipping range (its ends included), 0 outside
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0]


@pytest.mark.verifies("quant-calibration")
def test_min_max_versus_clipping_trade_off():
    torch.manual_seed(0)
    data = torch.distributions.Laplace(0.0, 1.0).sample((20000,))

    def quantize(t, clip):
        scale = 2 * clip / 255
        return fq(t, scale, 128, 0, 255)

    mse = lambda clip: (quantize(data, clip) - data).pow(2).mean().item()
    amax = data.abs().max().item()
    # min-max never clips: every value lands within half a step
    assert (quantize(data, amax) - data).abs().max() <= (2 * amax / 255) / 2 + 1e-6
    # one outlier stretches the step for everything else
    with_outlier = torch.cat([data, torch.tensor([100.0])])
    step = lambda t: 2 * t.abs().max().item() / 255
    assert step(with_outlier) > 8 * step(data)
    bulk_err = lambda clip: (quantize(data, clip) - data).pow(2).mean().item()
    assert bulk_err(100.0) > 50 * bulk_err(amax)
    # a percentile range clips the rare tail on purpose
    p9999 = torch.quantile(data.abs(), 0.9999).item()
    assert p9999 < amax and (quantize(data, p9999) - data).abs().max() > 0.5
    # clipping error against rounding error: narrowing the range shrinks the rounding error of the
    # values inside it and grows the clipping error of the tail; the total is smallest in between
    inside = data.abs() <= 3.0
    rounding = lambda clip: (quantize(data, clip) - data)[inside].pow(2).mean().item()
    clipping = lambda clip: (quantize(data, clip) - data)[~inside].pow(2).sum().item()
    assert rounding(3.0) < rounding(6.0) < rounding(amax)
    assert clipping(3.0) > clipping(6.0) > clipping(amax)
    clips = torch.linspace(1.0, amax, 200).tolist()
    best = min(clips, key=mse)
    assert 1.0 < best < amax and mse(best) < mse(amax) and mse(best) < mse(1.0)
    # the fewer the bits, the further inside the max the best clip sits
    mse4 = lambda clip: (fq(data, 2 * clip / 15, 8, 0, 15) - data).pow(2).mean().item()
    best4 = min(clips, key=mse4)
    assert best4 < 0.6 * amax and mse4(best4) < 0.5 * mse4(amax)


@pytest.mark.verifies("quant-dynamic-vs-static")
def test_quantize_dynamic_swaps_linear_and_adapts_to_each_batch():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qmodel = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    assert any(issubclass(w.category, DeprecationWarning) and "torchao" in str(w.message) for w in caught)
    assert type(qmodel[0]).__name__ == "Linear" and type(qmodel[0]).__module__.endswith("dynamic.modules.linear")
    assert qmodel[0].weight().dtype == torch.qint8  # weights quantized ahead of time
    # float in, float out; the activation range is measured per batch, so any input scale works
    for gain in (0.01, 1.0, 100.0):
        x = torch.randn(16, 64) * gain
        with torch.no_grad():
            out, ref = qmodel(x), model(x)
        assert out.dtype == torch.float32
        assert ((out - ref).norm() / ref.norm()).item() < 0.05


@pytest.mark.verifies("quant-gptq-awq")
def test_gptq_error_feedback_and_awq_channel_scaling_beat_round_to_nearest():
    dt = torch.float64
    torch.manual_seed(0)
    rows, cols, n = 16, 32, 256
    x = (torch.randn(n, 8, dtype=dt) @ torch.randn(8, cols, dtype=dt) + 0.1 * torch.randn(n, cols, dtype=dt)).T
    w = torch.randn(rows, cols, dtype=dt)
    # the layer-wise objective ||(w - w_hat) X||^2 has Hessian 2 X X^T (per output row)
    row = w[0]
    hessian = torch.autograd.functional.hessian(lambda wh: ((row - wh) @ x).pow(2).sum(), torch.zeros(cols, dtype=dt))
    assert torch.allclose(hessian, 2 * x @ x.T)
    # 4-bit, one scale per row
    scale = w.abs().amax(1, keepdim=True) / 7
    quant = lambda t: torch.clamp(torch.round(t / scale), -8, 7) * scale
    rtn = quant(w)
    # GPTQ: quantize column by column, push each column's error onto the columns not yet quantized
    h = 2 * x @ x.T
    h_inv = torch.linalg.inv(h + 0.01 * h.diag().mean() * torch.eye(cols, dtype=dt))
    work, gptq = w.clone(), torch.zeros_like(w)
    for j in range(cols):
        gptq[:, j] = quant(work[:, j:j + 1])[:, 0]
        err = (work[:, j] - gptq[:, j]) / h_inv[j, j]
        work[:, j + 1:] -= err[:, None] * h_inv[j, j + 1:][None, :]
        h_inv = h_inv - h_inv[:, j:j + 1] @ h_inv[j:j + 1, :] / h_inv[j, j]
    out_err = lambda q: ((w - q) @ x).norm().item()
    assert out_err(gptq) < 0.5 * out_err(rtn)
    # AWQ: scale up the input channel with large activations before quantizing, divide the activations
    torch.manual_seed(1)
    acts = torch.randn(512, 64, dtype=dt)
    acts[:, 5] *= 20  # one salient channel
    weight = torch.randn(32, 64, dtype=dt) * 0.1

    def awq_error(s):
        factor = torch.ones(64, dtype=dt)
        factor[5] = s
        q = _q_sym(weight * factor, 4, dim=1)
        return ((acts / factor) @ q.T - acts @ weight.T).norm().item()

    assert awq_error(2.0) < 0.7 * awq_error(1.0)


@pytest.mark.verifies("quant-llm-activation-outliers")
def test_smoothquant_and_llm_int8_against_per_tensor_int8():
    dt = torch.float64
    torch.manual_seed(2)
    x = torch.randn(256, 64, dtype=dt)
    x[:, [3, 17]] *= 50  # two outlier hidden dimensions, in every token
    w = torch.randn(64, 32, dtype=dt) * 0.05
    ref = x @ w
    rel = lambda y: ((y - ref).norm() / ref.norm()).item()
    per_tensor = rel(_q_sym(x, 8) @ _q_sym(w, 8, dim=0))
    # per-tensor int8: the step is sized for the outliers, the other channels get a few codes
    step = x.abs().max() / 127
    assert (x[:, [0, 1, 2]].abs() / step).max() < 5
    # SmoothQuant: X W = (X diag(s)^-1)(diag(s) W), s_j = max|X_j|^a / max|W_j|^(1-a), a = 0.5
    s = x.abs().amax(0) ** 0.5 / w.abs().amax(1) ** 0.5
    x_s, w_s = x / s, w * s[:, None]
    assert torch.allclose(x_s @ w_s, ref)  # exact in float
    spread = lambda t: (t.abs().amax(0).max() / t.abs().amax(0).median()).item()
    assert spread(x) > 40 and spread(x_s) < 8  # the difficulty moved into the weights
    assert rel(_q_sym(x_s, 8) @ _q_sym(w_s, 8, dim=0)) < 0.3 * per_tensor  # plain W8A8, per-tensor scales
    # LLM.int8(): dimensions with any |value| > 6 in 16 bits, the rest int8 with vector-wise scales
    outlier = (x.abs() > 6.0).any(0)
    assert outlier.sum().item() == 2
    mixed = x[:, outlier] @ w[outlier] + _q_sym(x[:, ~outlier], 8, dim=1) @ _q_sym(w[~outlier], 8, dim=0)
    assert rel(mixed) < 0.1 * per_tensor


@pytest.mark.verifies("quant-round-half-even")
def test_torch_round_sends_ties_to_even():
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -2.5])
    out = torch.clamp(torch.round(x / 1.0), -127, 127) * 1.0
    assert out.tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]  # choice 1: true
    assert torch.signbit(out[3]) and out[3] == 0  # -0., equal to 0
    assert out.tolist() != [1.0, 2.0, 3.0, -1.0, -3.0]  # choice 0: false, half away from zero
    away = torch.sign(x) * torch.floor(x.abs() + 0.5)
    assert away.tolist() == [1.0, 2.0, 3.0, -1.0, -3.0]
    half_up = torch.floor(x + 0.5)
    assert half_up.tolist() == [1.0, 2.0, 3.0, 0.0, -2.0] and not torch.equal(out, half_up)  # choice 2: false
    down = torch.floor(x)
    assert down.tolist() == [0.0, 1.0, 2.0, -1.0, -3.0] and not torch.equal(out, down)  # choice 3: false
    # Python and NumPy round half to even too
    assert [round(v) for v in (0.5, 1.5, 2.5, -0.5, -2.5)] == [0, 2, 2, 0, -2]
    assert torch.from_numpy(x.numpy().round()).tolist() == out.tolist()
    # torch's fake quantizers agree (their -0.5 gives 0., the zero point being added)
    per_tensor = torch.fake_quantize_per_tensor_affine(x, 1.0, 0, -127, 127)
    per_channel = torch.fake_quantize_per_channel_affine(
        x[None], torch.tensor([1.0]), torch.tensor([0], dtype=torch.int32), 0, -127, 127)[0]
    assert per_tensor.tolist() == per_channel.tolist() == [0.0, 2.0, 2.0, 0.0, -2.0]
    # rounding every tie up biases: over many ties the mean error is +half a step; to even, zero
    ties = torch.arange(-100, 100) + 0.5
    assert (torch.floor(ties + 0.5) - ties).mean().item() == 0.5
    assert (torch.round(ties) - ties).mean().item() == 0.0
    assert right_choices(TOPIC, "quant-round-half-even") == {1}


@pytest.mark.verifies("quant-affine-zero-point", "quant-per-channel")
def test_observers_widen_the_range_to_zero_and_floor_the_scale():
    from torch.ao.quantization.observer import MinMaxObserver, PerChannelMinMaxObserver

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao.quantization warns that it is deprecated
        observer = MinMaxObserver(dtype=torch.quint8)
        observer(torch.tensor([1.0, 3.0]))  # a range that misses 0 ...
        scale, zero_point = observer.calculate_qparams()
        per_channel = PerChannelMinMaxObserver(ch_axis=0, dtype=torch.qint8, qscheme=torch.per_channel_symmetric)
        w = torch.tensor([[0.0, 0.0, 0.0], [1.0, -2.0, 0.5]])  # row 0: an all-zero (pruned) channel
        per_channel(w)
        scales, _ = per_channel.calculate_qparams()
    assert scale.item() == pytest.approx(3 / 255) and zero_point.item() == 0  # ... is widened to [0, 3]
    assert scales[0].item() == torch.finfo(torch.float32).eps  # the floor on an all-zero channel
    naive = w / (w.abs().amax(1, keepdim=True) / 127)
    assert naive[0].isnan().all() and naive[1].isfinite().all()  # amax = 0: 0 / 0
