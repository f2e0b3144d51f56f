"""Facts of questions/checkpointing.yaml, checked by saving and loading in memory with torch.

Each verified single or multi question's test settles every choice (`# choice N` beside the
assertion, N its index in the file) and then checks that the file's key is exactly the set of
choices found true.
"""

from __future__ import annotations

import dataclasses
import io
import pickle
import random
import sys
import types
import zipfile

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from bankkeys import right_choices, topic_questions
from torch import nn
from torch.utils.checkpoint import checkpoint

TOPIC = "checkpointing"



@dataclasses.dataclass
class TrainConfig:
    lr: float = 3e-4


def _save(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def _load(data: bytes, **kwargs):
    return torch.load(io.BytesIO(data), **kwargs)


@pytest.mark.verifies("ckpt-save-state-dict")
def test_whole_model_pickle_is_refused_and_tied_to_the_class_path():
    mod = types.ModuleType("quizapp_ckpt_fact_models")
    exec("import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
         "        super().__init__()\n        self.fc = nn.Linear(3, 2)\n"
         "    def forward(self, x):\n        return self.fc(x)\n", mod.__dict__)
    sys.modules[mod.__name__] = mod
    try:
        torch.manual_seed(0)
        net = mod.Net()
        net.bn = nn.BatchNorm1d(2)
        net.bn(torch.randn(8, 2) * 3 + 1)  # running statistics that differ from their initial values
        whole, weights = _save(net), _save(net.state_dict())
        # choice 2: true. The default (weights_only=True since 2.6) refuses a pickled module...
        with pytest.raises(pickle.UnpicklingError):
            _load(whole)
        restored = _load(whole, weights_only=False)
        assert isinstance(restored, mod.Net)
        # choice 3: false. The pickled module keeps its buffers
        assert torch.equal(restored.bn.running_mean, net.bn.running_mean)
        assert torch.equal(restored.bn.running_var, net.bn.running_var)
        assert not torch.equal(net.bn.running_mean, torch.zeros(2))
        # choice 2: ...and pickle stored a reference to quizapp_ckpt_fact_models.Net: once it is gone, loading fails
        del mod.Net
        with pytest.raises(AttributeError):
            _load(whole, weights_only=False)
        # the state_dict loads into any module with the same structure
        fresh = nn.Module()
        fresh.fc, fresh.bn = nn.Linear(3, 2), nn.BatchNorm1d(2)
        fresh.load_state_dict(_load(weights))
        assert torch.equal(fresh.fc.weight, net.fc.weight)
        # choice 0: false. Both files are the same uncompressed zip container, of about the same size
        for data in (whole, weights):
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())
        assert len(weights) > len(whole) / 2
        # choice 1: false. The model's state_dict holds no optimizer state
        opt = torch.optim.Adam(net.parameters())
        net(torch.randn(4, 3)).sum().backward()
        opt.step()
        assert not any("exp_avg" in k or "step" in k for k in net.state_dict())
        assert {"exp_avg", "exp_avg_sq", "step"} <= set(opt.state_dict()["state"][0])
    finally:
        sys.modules.pop(mod.__name__, None)
    assert right_choices(TOPIC, "ckpt-save-state-dict") == {2}


@pytest.mark.verifies("ckpt-state-dict-keys")
def test_state_dict_holds_parameters_and_persistent_buffers_only():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    opt = torch.optim.Adam(model.parameters())
    model(torch.randn(8, 3)).sum().backward()
    opt.step()
    model[1].register_buffer("scratch", torch.zeros(1), persistent=False)
    keys = list(model.state_dict())
    assert keys == [
        "0.weight", "0.bias", "1.weight", "1.bias",
        "1.running_mean", "1.running_var", "1.num_batches_tracked",
    ]
    assert "0.weight" in keys  # choice 0: true
    assert "1.running_mean" in keys  # choice 1: true
    assert "1.running_std" not in keys  # choice 2: false, BatchNorm keeps the variance
    assert "0.weight.grad" not in keys and model[0].weight.grad is not None  # choice 3: false
    assert "1.momentum" not in keys and model[1].momentum == 0.1  # choice 4: false, a plain attribute
    assert "0.weight.exp_avg" not in keys  # choice 5: false...
    assert "exp_avg" in opt.state_dict()["state"][0]  # ...optimizer state lives in the optimizer
    assert right_choices(TOPIC, "ckpt-state-dict-keys") == {0, 1}


@pytest.mark.verifies("ckpt-map-location")
def test_map_location_remaps_storages_saved_on_cuda(monkeypatch):
    # A file whose storages are tagged cuda:0, as a GPU run writes it; this machine has no CUDA
    # (with CUDA the failure cannot be shown, so the test stands down).
    if torch.cuda.is_available():
        pytest.skip("needs a machine without CUDA")
    with monkeypatch.context() as patched:
        patched.setattr(torch.serialization, "location_tag", lambda storage: "cuda:0")
        data = _save({"weight": torch.ones(1, 3)})
    model = nn.Linear(3, 1, bias=False).cpu()
    # choice 0: false. The full unpickler restores onto cuda:0 just the same and fails
    for kwargs in ({}, {"weights_only": False}):
        with pytest.raises(RuntimeError, match="deserialize object on a CUDA device"):
            _load(data, **kwargs)
    # choice 1 and choice 2: false. torch.load itself fails, before model.cpu() or .cpu() can act
    with pytest.raises(RuntimeError, match="deserialize object on a CUDA device"):
        model.load_state_dict(_load(data))
    assert not hasattr(dict(), "cpu")
    # choice 3: true. map_location remaps every storage while deserialising
    loaded = _load(data, map_location="cpu")
    assert loaded["weight"].device == torch.device("cpu")
    model.load_state_dict(loaded)
    assert torch.equal(model.weight, torch.ones(1, 3))
    assert right_choices(TOPIC, "ckpt-map-location") == {3}


@pytest.mark.verifies("ckpt-ddp-prefix")
def test_wrapper_prefix_and_how_to_strip_it():
    from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present

    torch.manual_seed(0)
    # DDP and DataParallel both keep the network as `self.module`; DataParallel runs on one CPU
    wrapped = nn.DataParallel(nn.Linear(3, 2))
    sd = wrapped.state_dict()
    assert list(sd) == ["module.weight", "module.bias"]

    plain = nn.Linear(3, 2)
    before = plain.weight.detach().clone()
    with pytest.raises(RuntimeError, match="Unexpected key"):
        plain.load_state_dict(sd)
    result = plain.load_state_dict(sd, strict=False)  # loads nothing, says so, raises nothing
    assert result.missing_keys == ["weight", "bias"]
    assert torch.equal(plain.weight, before)

    consume_prefix_in_state_dict_if_present(sd, "module.")
    plain.load_state_dict(sd)
    assert torch.equal(plain.weight, wrapped.module.weight)


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 64), nn.Linear(64, 16)
        self.drop = nn.Dropout(0.5)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.fc2(self.drop(torch.tanh(self.fc1(x))))


def _saved_bytes(fn):
    total = 0

    def pack(t):
        nonlocal total
        total += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return out, total


@pytest.mark.verifies("ckpt-activation-checkpointing")
def test_activation_checkpointing_recomputes_and_gives_the_same_gradients():
    torch.manual_seed(0)
    block = _Block()
    x = torch.randn(32, 16, requires_grad=True)

    torch.manual_seed(1)
    out, plain_saved = _saved_bytes(lambda: block(x))
    out.square().sum().backward()
    plain_grads = [p.grad.clone() for p in block.parameters()]
    assert block.calls == 1
    block.zero_grad()

    block.calls = 0
    torch.manual_seed(1)
    out, ckpt_saved = _saved_bytes(lambda: checkpoint(block, x, use_reentrant=False))
    assert block.calls == 1
    out.square().sum().backward()
    assert block.calls == 2  # the forward ran again during backward
    for p, g in zip(block.parameters(), plain_grads):
        assert torch.equal(p.grad, g)  # same dropout mask: the RNG state was restored
    assert ckpt_saved < plain_saved / 4

    with pytest.warns(UserWarning, match="use_reentrant"):
        checkpoint(block, x)


@pytest.mark.verifies("ckpt-rng-resume")
def test_restoring_the_rng_state_reproduces_dropout_and_shuffling():
    loader = torch.utils.data.DataLoader(list(range(20)), batch_size=5, shuffle=True)
    drop = nn.Dropout(0.5)

    def draw():
        order = torch.cat(list(loader)).tolist()
        mask = drop(torch.ones(64)) > 0
        return order, mask

    # The restored state alone reproduces the run: no GradScaler (choice 0: false) or
    # param_groups take part in it.

    torch.manual_seed(0)
    draw()  # the first "epoch"
    saved = torch.get_rng_state()  # what a checkpoint would store
    uninterrupted = draw()

    torch.manual_seed(0)  # a restart re-seeds from the start...
    restarted = draw()
    assert restarted[0] != uninterrupted[0]
    assert not torch.equal(restarted[1], uninterrupted[1])

    torch.set_rng_state(saved)  # choice 1: true. Restoring the saved state continues the exact sequence
    resumed = draw()
    assert resumed[0] == uninterrupted[0]
    assert torch.equal(resumed[1], uninterrupted[1])

    # the prompt's checkpoint falls on an epoch boundary; saved mid-epoch, the RNG state alone is not
    # enough: the epoch's order was drawn when its iterator was created, before the state was saved
    torch.manual_seed(0)
    batches = iter(loader)
    next(batches)
    mid_epoch = torch.get_rng_state()
    rest = torch.cat(list(batches)).tolist()
    torch.set_rng_state(mid_epoch)
    assert torch.cat(list(loader)).tolist()[: len(rest)] != rest  # a new order, not the epoch's remainder

    # choice 2: false. eval() turns dropout off, which changes the training losses
    drop.eval()
    assert bool((drop(torch.ones(64)) == 1).all())
    # choice 3: false. optimizer.state_dict() already holds the param_groups
    opt = torch.optim.AdamW(nn.Linear(2, 2).parameters(), lr=3e-4, weight_decay=0.1)
    groups = opt.state_dict()["param_groups"]
    assert groups[0]["lr"] == 3e-4 and groups[0]["weight_decay"] == 0.1 and "betas" in groups[0]
    assert right_choices(TOPIC, "ckpt-rng-resume") == {1}


@pytest.mark.verifies("ckpt-weights-only")
def test_what_the_default_weights_only_load_accepts():
    model = nn.Linear(3, 2)
    opt = torch.optim.AdamW(model.parameters())
    model(torch.randn(4, 3)).sum().backward()
    opt.step()
    sched = torch.optim.lr_scheduler.StepLR(opt, 10)
    scaler = torch.amp.GradScaler("cpu")

    full = {"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
            "scaler": scaler.state_dict(), "epoch": 7, "rng": torch.get_rng_state()}
    loaded = _load(_save(full))
    assert loaded["epoch"] == 7 and torch.equal(loaded["rng"], full["rng"])
    assert loaded["scaler"]["scale"] == 2.0**16  # choice 1: true
    assert set(_load(_save(model.state_dict()))) == {"weight", "bias"}
    assert _load(_save(random.getstate())) == random.getstate()  # choice 3: true

    with pytest.raises(pickle.UnpicklingError):
        _load(_save(np.random.get_state()))  # choice 0: false, NumPy arrays are not allowlisted
    with pytest.raises(pickle.UnpicklingError):
        _load(_save(model))  # choice 2: false
    with_config = _save({"model": model.state_dict(), "config": TrainConfig()})
    with pytest.raises(pickle.UnpicklingError):
        _load(with_config)  # choice 4: false
    with torch.serialization.safe_globals([TrainConfig]):  # allowlisting a trusted class
        assert _load(with_config)["config"] == TrainConfig()
    assert _load(with_config, weights_only=False)["config"].lr == 3e-4
    assert right_choices(TOPIC, "ckpt-weights-only") == {1, 3}


@pytest.mark.verifies("ckpt-slice-save")
def test_saving_a_view_writes_the_whole_storage():
    big = torch.zeros(1_000_000)
    view_bytes = len(_save(big[:10]))
    clone_bytes = len(_save(big[:10].clone()))
    # the whole storage: 1,000,000 float32 elements, whatever the view shows
    assert view_bytes == pytest.approx(big.numel() * big.element_size(), rel=0.01)
    assert view_bytes == pytest.approx(topic_questions(TOPIC)["ckpt-slice-save"].answer, rel=0.01)
    assert clone_bytes < 2_000
    loaded = _load(_save(big[:10]))
    assert loaded.shape == (10,) and loaded.untyped_storage().nbytes() == 4_000_000


@pytest.mark.verifies("ckpt-activation-checkpointing")
def test_non_reentrant_checkpoint_takes_kwargs_grad_and_inputs_without_grad():
    import warnings

    from torch.utils.checkpoint import checkpoint_sequential, set_checkpoint_early_stop

    lin = nn.Linear(3, 3)

    def f(x, scale=1.0):
        return lin(x) * scale

    x = torch.randn(2, 3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reentrant version warns about itself
        with pytest.raises(ValueError, match="keyword"):
            checkpoint(f, x, use_reentrant=True, scale=2.0)
        with pytest.raises(RuntimeError, match="incompatible with .grad"):
            torch.autograd.grad(checkpoint(f, x, use_reentrant=True).sum(), x)
        with pytest.raises(RuntimeError):  # no input requires grad: nothing to backpropagate through
            checkpoint(f, torch.randn(2, 3), use_reentrant=True).sum().backward()
    assert torch.allclose(checkpoint(f, x, use_reentrant=False, scale=2.0), f(x, 2.0))
    (g,) = torch.autograd.grad(checkpoint(f, x, use_reentrant=False).sum(), x)
    assert torch.allclose(g, lin.weight.sum(0).expand(2, 3))
    lin.zero_grad()
    checkpoint(f, torch.randn(2, 3), use_reentrant=False).sum().backward()
    assert lin.weight.grad is not None  # the parameters still get their gradients
    seq = nn.Sequential(*[nn.Linear(3, 3) for _ in range(4)])
    assert torch.allclose(checkpoint_sequential(seq, 2, x, use_reentrant=False), seq(x))

    # at most one extra forward: recomputation stops once the last tensor backward needs is rebuilt
    block = _Block().eval()  # no dropout after fc2, so fc2's output is never needed again
    ran = []
    block.fc2.register_forward_hook(lambda m, i, o: ran.append("fc2"))
    checkpoint(block, x.new_ones(4, 16), use_reentrant=False).sum().backward()
    assert ran == ["fc2"]  # fc2 ran in forward only: its recomputation was skipped
    ran.clear()
    with set_checkpoint_early_stop(False):
        checkpoint(block, x.new_ones(4, 16), use_reentrant=False).sum().backward()
    assert ran == ["fc2", "fc2"]


def _run(steps_done: int, steps: int, ckpt=None, restore=("model", "optimizer", "scheduler", "scaler", "rng")):
    """Train a small model with AdamW, warmup, a GradScaler, dropout and a shuffling loader, from step
    `steps_done` to `steps`, restoring `restore` from `ckpt`; returns the weights and a checkpoint."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Dropout(0.3), nn.Linear(8, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 4))
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**4, growth_interval=2)
    g = torch.Generator().manual_seed(1)
    data = torch.utils.data.TensorDataset(torch.randn(24, 4, generator=g), torch.randn(24, 1, generator=g))
    loader = torch.utils.data.DataLoader(data, batch_size=8, shuffle=True)
    if ckpt is not None:
        for name, obj in (("model", model), ("optimizer", opt), ("scheduler", sched), ("scaler", scaler)):
            if name in restore:
                obj.load_state_dict(ckpt[name])
        if "rng" in restore:
            torch.set_rng_state(ckpt["rng"])
    step = steps_done
    while step < steps:  # whole epochs of 3 batches; checkpoints fall on epoch boundaries
        for x, y in loader:
            opt.zero_grad()
            scaler.scale(F.mse_loss(model(x), y)).backward()
            scaler.step(opt)
            scaler.update()
            sched.step()
            step += 1
    saved = {"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
             "scaler": scaler.state_dict(), "rng": torch.get_rng_state(), "step": step}
    return [p.detach().clone() for p in model.parameters()], _load(_save(saved))


@pytest.mark.verifies("ckpt-resumable-contents")
def test_a_full_checkpoint_resumes_exactly_and_each_missing_part_shows():
    straight, _ = _run(0, 12)
    _, ckpt = _run(0, 6)
    resumed, _ = _run(ckpt["step"], 12, ckpt)
    assert all(torch.equal(a, b) for a, b in zip(straight, resumed))  # as if it had never stopped
    assert set(ckpt["scaler"]) >= {"scale", "_growth_tracker"} and ckpt["scaler"]["scale"] != 2.0**4
    assert ckpt["optimizer"]["param_groups"][0]["lr"] == 0.05  # param groups travel with the optimizer
    for missing in ("optimizer", "scheduler", "scaler", "rng"):
        restore = {"model", "optimizer", "scheduler", "scaler", "rng"} - {missing}
        partial, _ = _run(ckpt["step"], 12, ckpt, restore)
        assert not all(torch.equal(a, b) for a, b in zip(straight, partial)), missing
    # without the optimizer state Adam's first update is about lr·sign(g): lr in every coordinate
    # whose gradient is well above eps, 0 where the gradient is exactly zero, lr/2 where |g| = eps
    p = nn.Parameter(torch.zeros(5))
    opt = torch.optim.Adam([p], lr=0.01)
    p.grad = torch.tensor([1e-4, -3.0, 50.0, -0.2, 7.0])
    opt.step()
    assert torch.allclose(p.detach().abs(), torch.full((5,), 0.01), rtol=1e-3)
    p = nn.Parameter(torch.zeros(2))
    opt = torch.optim.Adam([p], lr=0.01, eps=1e-8)
    p.grad = torch.tensor([0.0, 1e-8])
    opt.step()
    assert p[0].item() == 0.0 and p[1].item() == pytest.approx(-0.005, rel=1e-3)


@pytest.mark.verifies("ckpt-resume-bugs")
def test_what_each_resume_mistake_does():
    import warnings

    # keys with a prefix: strict=False loads nothing and raises nothing
    model = nn.Linear(3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # importing the compiler warns about torch.jit
        compiled_sd = torch.compile(model).state_dict()
    assert list(compiled_sd) == ["_orig_mod.weight", "_orig_mod.bias"]
    fresh = nn.Linear(3, 2)
    before = fresh.weight.detach().clone()
    result = fresh.load_state_dict(compiled_sd, strict=False)
    assert result.missing_keys == ["weight", "bias"] and torch.equal(fresh.weight, before)
    with pytest.raises(RuntimeError, match="Missing key"):
        fresh.load_state_dict(compiled_sd)
    # optimizer state missing: late-training Adam steps are small, a fresh Adam's first is lr·sign(g)
    torch.manual_seed(0)
    p = nn.Parameter(torch.zeros(100))
    opt = torch.optim.Adam([p], lr=0.01)
    for _ in range(500):
        p.grad = torch.randn(100) * 0.1 + 0.01  # noisy gradients, as late in training
        opt.step()
    before = p.detach().clone()
    p.grad = torch.randn(100) * 0.1 + 0.01
    opt.step()
    late = (p.detach() - before).abs().mean().item()
    restarted = torch.optim.Adam([p], lr=0.01)
    before = p.detach().clone()
    p.grad = torch.randn(100) * 0.1 + 0.01
    restarted.step()
    first = (p.detach() - before).abs()
    assert torch.allclose(first, torch.full((100,), 0.01), rtol=1e-3) and first.mean().item() > 2 * late
    # a new warmup scheduler starts again from a tiny lr; a GradScaler restarts at 2^16
    opt = torch.optim.SGD([p], lr=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.01, total_iters=100)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.01)
    assert torch.amp.GradScaler("cpu").get_scale() == 2.0**16
    del sched
    # the test that catches all of it: N steps, save, resume, M more, against N + M straight
    straight, _ = _run(0, 9)
    _, ckpt = _run(0, 3)
    assert all(torch.equal(a, b) for a, b in zip(straight, _run(3, 9, ckpt)[0]))
    assert not all(torch.equal(a, b) for a, b in zip(straight, _run(3, 9, ckpt, {"model"})[0]))


def _model_and_adam(seed: int, lr: float = 0.1):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    return model, torch.optim.Adam(model.parameters(), lr=lr)


@pytest.mark.verifies("ckpt-fsdp-save")
def test_dcp_load_fills_the_dicts_and_set_state_dict_hands_them_back(tmp_path):
    import inspect
    import warnings

    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_model_state_dict,
        get_optimizer_state_dict,
        get_state_dict,
        set_model_state_dict,
        set_optimizer_state_dict,
        set_state_dict,
    )
    from torch.distributed.checkpoint.stateful import Stateful

    fields = set(inspect.signature(StateDictOptions).parameters)
    assert {"full_state_dict", "cpu_offload", "broadcast_from_rank0"} <= fields
    assert hasattr(dcp, "async_save") and callable(dcp_to_torch_save)

    model, opt = _model_and_adam(0)
    for _ in range(3):
        opt.zero_grad()
        model(torch.randn(8, 4)).sum().backward()
        opt.step()
    opt.param_groups[0]["lr"] = 0.025  # as a scheduler would have left it
    msd, osd = get_model_state_dict(model), get_optimizer_state_dict(model, opt)
    assert set(osd["state"]) == {"0.weight", "0.bias", "2.weight", "2.bias"}  # keyed by parameter name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no process group: DCP says it runs without one
        dcp.save({"model": msd, "optim": osd}, checkpoint_id=tmp_path / "sharded")

        # resume: fresh objects, their state dicts, dcp.load into them, then the set helpers
        model2, opt2 = _model_and_adam(1)
        msd2, osd2 = get_state_dict(model2, opt2)
        dcp.load({"model": msd2, "optim": osd2}, checkpoint_id=tmp_path / "sharded")
        assert osd2["param_groups"][0]["lr"] == 0.025  # the dictionary is filled...
        assert opt2.param_groups[0]["lr"] == 0.1  # ...but the optimizer does not have it yet
        set_state_dict(model2, opt2, model_state_dict=msd2, optim_state_dict=osd2)
        assert opt2.param_groups[0]["lr"] == 0.025
        for p, p2 in zip(model.parameters(), model2.parameters()):
            assert torch.equal(p, p2) and torch.equal(opt.state[p]["exp_avg"], opt2.state[p2]["exp_avg"])

        # a Stateful wrapper lets dcp.save and dcp.load call the helpers themselves
        class App(Stateful):
            def __init__(self, model, opt):
                self.model, self.opt = model, opt

            def state_dict(self):
                m, o = get_state_dict(self.model, self.opt)
                return {"model": m, "optim": o}

            def load_state_dict(self, sd):
                set_state_dict(self.model, self.opt, model_state_dict=sd["model"], optim_state_dict=sd["optim"])

        dcp.save({"app": App(model, opt)}, checkpoint_id=tmp_path / "stateful")
        model3, opt3 = _model_and_adam(2)
        dcp.load({"app": App(model3, opt3)}, checkpoint_id=tmp_path / "stateful")
        assert opt3.param_groups[0]["lr"] == 0.025 and torch.equal(model3[2].weight, model[2].weight)

        # one file from a DCP directory
        dcp_to_torch_save(tmp_path / "sharded", tmp_path / "one.pt")
    assert torch.equal(torch.load(tmp_path / "one.pt")["model"]["2.weight"], model[2].weight.detach())

    # a full state dict: plain tensors, loadable into an unwrapped model, applied with the set helpers
    full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    assert all(type(t) is torch.Tensor for t in full.values())
    model4, opt4 = _model_and_adam(3)
    set_model_state_dict(model4, full, options=StateDictOptions(full_state_dict=True))
    full_osd = get_optimizer_state_dict(model, opt, options=StateDictOptions(full_state_dict=True))
    set_optimizer_state_dict(model4, opt4, full_osd, options=StateDictOptions(full_state_dict=True))
    assert torch.equal(model4[0].weight, model[0].weight)
    assert torch.equal(opt4.state[model4[0].weight]["exp_avg_sq"], opt.state[model[0].weight]["exp_avg_sq"])
