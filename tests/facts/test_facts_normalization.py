"""Facts taught by questions/normalization.yaml, checked by running torch's normalisation layers.

Single and multi questions: every choice is settled (`# choice N`, N its index in the file), then
the file's key must be exactly the set found true. Numeric questions compute their value and check
that the file's tolerance takes it rounded as the prompt asks and rejects the usual slips.
"""

from __future__ import annotations

import math

import pytest
import torch
from bankkeys import accepts, right_choices
from torch import nn

TOPIC = "normalization"


def _right(qid: str) -> set[int]:
    return right_choices(TOPIC, qid)


def _accepts(qid: str, answer) -> bool:
    return accepts(TOPIC, qid, answer)


def _randn(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


@pytest.mark.verifies("norm-bn-axes")
def test_batchnorm2d_pools_each_channel_over_batch_and_positions():
    x = _randn(4, 3, 5, 5) * 3 + 1
    bn = nn.BatchNorm2d(3, affine=False, momentum=1.0)
    out = bn(x)
    mean = x.mean(dim=(0, 2, 3), keepdim=True)
    var = x.var(dim=(0, 2, 3), unbiased=False, keepdim=True)
    assert torch.allclose(out, (x - mean) / torch.sqrt(var + bn.eps), atol=1e-5)  # choice 1
    assert bn.running_mean.shape == (3,)  # choice 1: C statistics
    per_sample = (x - x.mean(dim=(1, 2, 3), keepdim=True)) / torch.sqrt(x.var(dim=(1, 2, 3), unbiased=False, keepdim=True) + 1e-5)
    assert not torch.allclose(out, per_sample, atol=1e-3)  # choice 0
    per_position = (x - x.mean(dim=0, keepdim=True)) / torch.sqrt(x.var(dim=0, unbiased=False, keepdim=True) + 1e-5)
    assert not torch.allclose(out, per_position, atol=1e-3)  # choice 2
    assert not torch.allclose(out, nn.InstanceNorm2d(3)(x), atol=1e-3)  # choice 3
    assert _right("norm-bn-axes") == {1}


@pytest.mark.verifies("norm-ln-token")
def test_layernorm_over_d_depends_on_the_token_alone():
    x = _randn(2, 5, 8)
    ln = nn.LayerNorm(8)
    out = ln(x)
    changed = x.clone()
    changed[0, 1:] += 10 * _randn(4, 8, seed=1)  # other tokens of the same sequence
    changed[1] += 10  # the other sample of the batch
    assert torch.allclose(ln(changed)[0, 0], out[0, 0])  # choice 3; so choices 0, 1, 2 are false
    tok = x[0, 0]
    assert torch.allclose(out[0, 0], (tok - tok.mean()) / torch.sqrt(tok.var(unbiased=False) + 1e-5), atol=1e-5)
    assert ln.weight.shape == (8,) and ln.bias.shape == (8,)
    assert _right("norm-ln-token") == {3}


@pytest.mark.verifies("norm-rmsnorm")
def test_rmsnorm_has_no_centring_and_no_bias():
    rms = nn.RMSNorm(8, eps=1e-5)
    assert [name for name, _ in rms.named_parameters()] == ["weight"]  # choices 0 and 2: a gain, no bias
    x = _randn(3, 8) + 2.0
    expected = x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-5)
    assert torch.allclose(rms(x), expected, atol=1e-6)  # choice 0
    centred_by_abs = (x - x.mean(-1, keepdim=True)) / (x - x.mean(-1, keepdim=True)).abs().mean(-1, keepdim=True)
    assert not torch.allclose(rms(x), centred_by_abs, atol=1e-3)  # choice 1
    y = x.clone()
    y[1:] *= 50  # other rows of the batch do not matter: choice 3 is false
    assert torch.allclose(rms(y)[0], rms(x)[0])
    zero_mean = x - x.mean(-1, keepdim=True)  # the explanation: equal to LayerNorm on centred rows
    assert torch.allclose(rms(zero_mean), nn.LayerNorm(8, eps=1e-5)(zero_mean), atol=1e-5)
    assert _right("norm-rmsnorm") == {0}


@pytest.mark.verifies("norm-bn-state-numbers")
def test_batchnorm2d_state_dict_size():
    bn = nn.BatchNorm2d(256)
    state = bn.state_dict()
    assert set(state) == {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}
    total = sum(t.numel() for t in state.values())
    assert total == 1025
    assert sum(p.numel() for p in bn.parameters()) == 512
    assert _accepts("norm-bn-state-numbers", str(total))
    assert not _accepts("norm-bn-state-numbers", "1024")  # the slip: num_batches_tracked forgotten
    assert not _accepts("norm-bn-state-numbers", "512")  # parameters only


@pytest.mark.verifies("norm-running-mean")
def test_running_mean_after_three_batches():
    bn = nn.BatchNorm1d(1)
    assert bn.momentum == 0.1
    batch = torch.tensor([[4.0], [6.0]])  # mean exactly 5
    for _ in range(3):
        bn(batch)
    expected = sum(0.1 * 0.9**k * 5.0 for k in range(3))
    assert bn.running_mean.item() == pytest.approx(expected, rel=1e-6)
    value = bn.running_mean.item()
    assert _accepts("norm-running-mean", f"{value:.3f}") and _accepts("norm-running-mean", str(value))
    old_weight = 5.0 * (1 - 0.1**3)  # momentum read as the weight of the old value
    assert not _accepts("norm-running-mean", f"{old_weight:.3f}") and not _accepts("norm-running-mean", "5")
    assert not _accepts("norm-running-mean", "1.36")  # rounded to two places, not three


@pytest.mark.verifies("norm-running-var-unbiased")
def test_biased_variance_to_normalise_unbiased_to_store():
    bn = nn.BatchNorm1d(1, momentum=1.0, affine=False)
    out = bn(torch.tensor([[0.0], [2.0]]))
    # normalised with variance 1: outputs are ±1/√(1 + eps)
    assert out.flatten().tolist() == pytest.approx([-1 / math.sqrt(1 + 1e-5), 1 / math.sqrt(1 + 1e-5)])  # choice 2
    assert bn.running_var.item() == pytest.approx(2.0)  # choice 2; so choices 0, 1 and 3 are false
    assert out.abs().max().item() != pytest.approx(1 / math.sqrt(2), abs=1e-3)  # choice 0: not normalised with 2
    assert bn.running_var.item() != pytest.approx(0.1)  # choice 3: the old value (1) is not kept
    assert _right("norm-running-var-unbiased") == {2}


@pytest.mark.verifies("norm-eval-mode")
def test_batchnorm_in_eval_mode():
    torch.manual_seed(0)
    bn = nn.BatchNorm1d(4)
    for _ in range(5):
        bn(_randn(16, 4) * 2 + 3)
    stats = (bn.running_mean.clone(), bn.running_var.clone())
    bn.eval()
    assert torch.equal(bn.running_mean, stats[0]) and torch.equal(bn.running_var, stats[1])  # choice 5
    x = _randn(8, 4, seed=3)
    out = bn(x)
    expected = (x - stats[0]) / torch.sqrt(stats[1] + bn.eps) * bn.weight + bn.bias
    assert torch.allclose(out, expected, atol=1e-6)  # choice 0
    out.sum().backward()  # gradients on, a backward run: the stats still stay put
    assert torch.equal(bn.running_mean, stats[0]) and torch.equal(bn.running_var, stats[1])  # choice 1
    assert torch.allclose(bn(x[:3])[0], out[0])  # choice 2
    assert bn(x[:1]).shape == (1, 4)  # choice 3
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        bn.train()(x[:1])
    assert bn.weight.requires_grad and bn.weight.grad is not None  # choice 4: still trained
    assert _right("norm-eval-mode") == {0, 2, 3}


@pytest.mark.verifies("norm-accum-microbatch")
def test_accumulation_does_not_restore_batchnorm_statistics():
    x = _randn(32, 3) * 2 + 1
    torch.manual_seed(0)
    big = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Tanh(), nn.Linear(4, 1))
    small = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Tanh(), nn.Linear(4, 1))
    small.load_state_dict(big.state_dict())
    big(x).pow(2).mean().backward()
    outs = []
    for chunk in x.chunk(8):
        out = small(chunk)
        outs.append(out.detach())
        (out.pow(2).mean() / 8).backward()
    assert not torch.allclose(torch.cat(outs), big(x).detach(), atol=1e-3)  # choice 0
    grad_big = torch.cat([p.grad.flatten() for p in big.parameters()])
    grad_small = torch.cat([p.grad.flatten() for p in small.parameters()])
    assert not torch.allclose(grad_big, grad_small, atol=1e-4)  # choice 1
    assert small[1].num_batches_tracked.item() == 8  # choice 2 is false: 8 updates, not one per step
    hidden = small[0](x[:4]).detach()
    slow = nn.BatchNorm1d(4, momentum=0.1 / 8)
    assert torch.allclose(slow(hidden), nn.BatchNorm1d(4)(hidden))  # choice 3: momentum leaves the train forward alone
    sync = nn.SyncBatchNorm(4)  # choice 4: on one process it is plain BatchNorm of the micro-batch
    assert torch.allclose(sync(hidden), nn.BatchNorm1d(4)(hidden))
    assert _right("norm-accum-microbatch") == {0}


@pytest.mark.verifies("norm-convert-syncbn")
def test_convert_sync_batchnorm_swaps_the_layers_and_keeps_the_state():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 4, 3), nn.BatchNorm2d(4))
    model[1].running_mean.fill_(0.5)
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert [type(m).__name__ for m in converted] == ["Conv2d", "SyncBatchNorm", "ReLU", "Conv2d", "SyncBatchNorm"]
    assert torch.equal(converted[1].running_mean, torch.full((4,), 0.5))
    assert converted is model  # not a copy: the layers are swapped inside the model itself
    lone = nn.BatchNorm2d(4)
    assert isinstance(nn.SyncBatchNorm.convert_sync_batchnorm(lone), nn.SyncBatchNorm)  # a new object here
    for spelling in ("convert_sync_batchnorm", "nn.SyncBatchNorm.convert_sync_batchnorm(model)"):
        assert _accepts("norm-convert-syncbn", spelling)


@pytest.mark.verifies("norm-groupnorm")
def test_groupnorm_special_cases():
    x = _randn(64, 4, 5, 5) * 2 + 1
    c = 4
    one_group = nn.GroupNorm(1, c, affine=False)
    per_channel = nn.GroupNorm(c, c, affine=False)
    assert torch.allclose(one_group(x), nn.LayerNorm([c, 5, 5], elementwise_affine=False)(x), atol=1e-5)  # choice 0
    assert not torch.allclose(per_channel(x), nn.BatchNorm2d(c, affine=False)(x), atol=1e-3)  # choice 1
    assert torch.allclose(per_channel(x), nn.InstanceNorm2d(c)(x), atol=1e-5)  # choice 2
    assert torch.allclose(one_group(x[:1]), one_group(x)[:1], atol=1e-6)  # choice 3
    assert list(one_group.buffers()) == []  # choice 4: no running statistics
    assert torch.equal(one_group.eval()(x), one_group.train()(x))
    with pytest.raises(ValueError, match="divisible"):  # choice 5: no padding, an error
        nn.GroupNorm(3, c)
    assert _right("norm-groupnorm") == {0, 2, 3}


@pytest.mark.verifies("norm-eps-small-variance")
def test_eps_damps_rows_of_small_variance():
    ln = nn.LayerNorm(2)
    value = ln(torch.tensor([[0.001, -0.001]]))[0, 0].item()
    assert value == pytest.approx(0.001 / math.sqrt(1e-6 + 1e-5), rel=1e-4)
    assert _accepts("norm-eps-small-variance", f"{value:.2f}") and _accepts("norm-eps-small-variance", f"{value:.4f}")
    without_eps = nn.LayerNorm(2, eps=0.0)(torch.tensor([[0.001, -0.001]]))[0, 0].item()
    assert without_eps == pytest.approx(1.0, rel=1e-4)
    unbiased = 0.001 / math.sqrt(2e-6 + 1e-5)  # the slip of dividing by n - 1
    assert not _accepts("norm-eps-small-variance", f"{without_eps:.2f}")
    assert not _accepts("norm-eps-small-variance", f"{unbiased:.2f}")


@pytest.mark.verifies("norm-rmsnorm-eps-default")
def test_rmsnorm_default_eps_is_the_dtype_machine_epsilon():
    rms = nn.RMSNorm(2)
    assert rms.eps is None
    x = torch.tensor([[1e-4, 1e-4]])
    got = rms(x)[0, 0].item()
    machine = torch.finfo(torch.float32).eps
    assert got == pytest.approx(1e-4 / math.sqrt(1e-8 + machine), rel=1e-4)  # choice 1
    assert got != pytest.approx(1e-4 / math.sqrt(1e-8 + 1e-5), rel=1e-2)  # choice 0
    assert got != pytest.approx(1e-4 / math.sqrt(1e-8 + 1e-6), rel=1e-2)  # choice 2
    assert torch.equal(rms(torch.zeros(1, 2)), torch.zeros(1, 2))  # choice 3: no NaN on a zero row
    assert nn.RMSNorm(2, eps=1e-5)(x)[0, 0].item() == pytest.approx(0.0316, abs=5e-4)
    assert nn.RMSNorm(2).double()(x.double())[0, 0].item() == pytest.approx(1.0, rel=1e-6)  # float64's eps is far smaller
    # float16 and bfloat16 are computed in float32: float32's eps, not their own (bfloat16's is 0.0078)
    for dtype in (torch.float16, torch.bfloat16):
        half = nn.RMSNorm(2).to(dtype)(x.to(dtype))[0, 0].item()
        assert half == pytest.approx(1e-4 / math.sqrt(1e-8 + machine), rel=1e-2)
        assert half != pytest.approx(1e-4 / math.sqrt(1e-8 + torch.finfo(dtype).eps), rel=0.5)
    assert nn.LayerNorm(2).eps == 1e-5 and nn.BatchNorm2d(2).eps == 1e-5
    assert _right("norm-rmsnorm-eps-default") == {1}


@pytest.mark.verifies("norm-conv-bias")
def test_a_bias_before_batchnorm_cancels():
    torch.manual_seed(0)
    conv, bn = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)
    x = _randn(8, 3, 6, 6)
    bn(conv(x)).pow(3).sum().backward()
    assert conv.bias.grad.abs().max().item() < 1e-4  # choice 0 (zero up to rounding)
    assert conv.bias.grad.abs().max().item() < 1e-5 * conv.weight.grad.abs().max().item()
    bias64 = nn.Conv2d(3, 4, 3).double()
    nn.BatchNorm2d(4).double()(bias64(x.double())).pow(3).sum().backward()
    assert bias64.bias.grad.abs().max().item() < 1e-10  # the residue shrinks with the precision: rounding
    assert conv.weight.grad.abs().max().item() > 1e-2
    out = bn(conv(x)).detach()
    with torch.no_grad():
        conv.bias.add_(5.0)  # any per-channel offset leaves the train output unchanged: choices 1 and 2
    assert torch.allclose(bn(conv(x)), out, atol=1e-4)
    # choice 3: eval mode cancels it too, as the running mean moved by the same offset
    bn_a, bn_b = nn.BatchNorm2d(4, momentum=None), nn.BatchNorm2d(4, momentum=None)
    plain = conv(x).detach()
    for _ in range(3):
        bn_a(plain)
        bn_b(plain + 5.0)
    assert torch.allclose(bn_a.eval()(plain), bn_b.eval()(plain + 5.0), atol=1e-4)
    assert _right("norm-conv-bias") == {0}


@pytest.mark.verifies("norm-train-eval-gap")
def test_recomputing_running_stats_with_a_cumulative_average_needs_a_reset():
    old, new = torch.tensor([[4.0], [6.0]]), torch.tensor([[14.0], [16.0]])
    bn = nn.BatchNorm1d(1)
    for _ in range(1000):
        bn(old)
    bn.momentum = None  # a cumulative average over num_batches_tracked updates
    with torch.no_grad():
        for _ in range(100):
            bn(new)
    assert bn.running_mean.item() < 6.0  # without a reset the 1000 old updates still dominate
    bn.reset_running_stats()
    with torch.no_grad():
        for _ in range(100):
            bn(new)
    assert bn.running_mean.item() == pytest.approx(15.0)


@pytest.mark.verifies("norm-train-eval-gap")
def test_validating_with_batch_statistics_has_side_effects_unless_done_on_a_copy():
    import copy

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Dropout(0.5), nn.Linear(8, 2)).eval()
    val = _randn(64, 4, seed=1) + 3.0
    stats = model[1].running_mean.clone()
    # model.train(): dropout turns on (two passes differ) and the running statistics move
    model.train()
    with torch.no_grad():
        a, b = model(val), model(val)
    assert not torch.equal(a, b)
    assert not torch.equal(model[1].running_mean, stats)
    # a copy with only its BatchNorm in train mode: deterministic, and the original is untouched
    model[1].running_mean.copy_(stats)
    model.eval()
    probe = copy.deepcopy(model)
    for m in probe.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.train()
    with torch.no_grad():
        assert torch.equal(probe(val), probe(val))
    assert torch.equal(model[1].running_mean, stats)


@pytest.mark.verifies("norm-why-ln-transformers")
def test_batchnorm_couples_tokens_layernorm_does_not():
    x = _randn(4, 8, 6)  # (batch, features, time)
    bn, ln = nn.BatchNorm1d(8), nn.LayerNorm(8)
    tokens_ln = lambda t: ln(t.transpose(1, 2)).transpose(1, 2)  # noqa: E731  per token, over features

    later = x.clone()
    later[:, :, -1] += 5.0  # change only the last (future) position
    # BatchNorm pools each feature over batch and time: earlier tokens now normalise differently
    assert not torch.allclose(bn(x)[:, :, 0], bn(later)[:, :, 0])
    assert torch.allclose(tokens_ln(x)[:, :, 0], tokens_ln(later)[:, :, 0])  # LayerNorm: no leak
    # padding changes BatchNorm's statistics for the real tokens
    padded = torch.cat([x, torch.zeros(4, 8, 3)], dim=2)
    assert not torch.allclose(bn(padded)[:, :, :6], bn(x))
    assert torch.allclose(tokens_ln(padded)[:, :, :6], tokens_ln(x))
    # another sample in the batch changes a sample's BatchNorm output, never its LayerNorm output
    other = x.clone()
    other[1:] = _randn(3, 8, 6, seed=1)
    assert not torch.allclose(bn(x)[0], bn(other)[0]) and torch.allclose(tokens_ln(x)[0], tokens_ln(other)[0])
    # train and eval: BatchNorm switches to running statistics, LayerNorm computes the same thing
    one = x[:1]
    bn_train = bn(one)
    bn.eval(), ln.eval()
    assert not torch.allclose(bn(one), bn_train)
    ln_eval = tokens_ln(one)
    ln.train()
    assert torch.equal(tokens_ln(one), ln_eval)
    assert list(dict(ln.named_buffers())) == [] and {"running_mean", "running_var"} <= set(dict(bn.named_buffers()))
    rms = nn.RMSNorm(8)
    assert [n for n, _ in rms.named_parameters()] == ["weight"]  # no bias, and no mean subtracted:
    v = _randn(2, 8)
    assert not torch.allclose(rms(v + 3.0), rms(v), atol=1e-3) and torch.allclose(ln(v + 3.0), ln(v), atol=1e-5)


@pytest.mark.verifies("norm-finetune-small-batch")
def test_two_image_batches_overwrite_pretrained_statistics_unless_frozen():
    pretrained_mean, pretrained_var = torch.full((4,), 0.5), torch.full((4,), 2.0)

    def backbone():
        torch.manual_seed(0)
        m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
        m[1].running_mean.copy_(pretrained_mean)
        m[1].running_var.copy_(pretrained_var)
        return m

    two_images = _randn(2, 3, 16, 16) * 3 + 1
    model = backbone()
    model(two_images)  # train mode: normalised with two images' statistics, and the buffers move
    assert not torch.allclose(model[1].running_mean, pretrained_mean)
    # freeze: eval mode keeps and uses the pretrained statistics; also freeze gain and bias
    model = backbone()
    model[1].eval()
    model[1].requires_grad_(False)
    model(two_images).sum().backward()
    assert torch.equal(model[1].running_mean, pretrained_mean) and model[1].weight.grad is None
    assert model[0].weight.grad is not None  # the conv still trains
    model.train()  # ...but model.train() puts the BN layer back in train mode: re-freeze after it
    assert model[1].training
    model(two_images)
    assert not torch.allclose(model[1].running_mean, pretrained_mean)
    # GroupNorm: one image's output does not depend on the other image
    gn = nn.GroupNorm(2, 4)
    a, b, c = _randn(1, 4, 8, 8, seed=1), _randn(1, 4, 8, 8, seed=2), _randn(1, 4, 8, 8, seed=3)
    assert torch.allclose(gn(torch.cat([a, b]))[0], gn(torch.cat([a, c]))[0])
    bn = nn.BatchNorm2d(4)
    assert not torch.allclose(bn(torch.cat([a, b]))[0], bn(torch.cat([a, c]))[0])
