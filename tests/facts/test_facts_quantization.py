"""Facts taught by questions/quantization.yaml, checked by running torch.

Plain tensor arithmetic plus torch.fake_quantize_per_*_affine (not deprecated, unlike
torch.quantize_per_tensor and torch.ao.quantization, which warn on this build).

Each verified single question's test settles every choice (`# choice N` beside the assertion, N
its index in the file) and then checks that the file's key is the one found true. Numeric
answers are computed here and compared with the file's key. In quant-per-channel, the claim that
per-channel weight quantization leaves activations alone holds by the definition of the
quantizer (it receives the weight tensor only); the test shows the quantized weight does not
depend on any activation.
"""


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
