"""Facts taught by questions/pruning.yaml, checked against torch.nn.utils.prune.

Each verified single or multi question's test settles every choice (`# choice N` beside the
assertion, N its index in the file) and then checks that the file's key is exactly the set found
true. Numeric answers are computed here and compared with the file's key. The cards' GPU claims
(Sparse Tensor Core throughput, dense kernels multiplying zeros) rest on NVIDIA's documentation
and the 2:4 papers; on CPU the tests check the dense reparametrisation, the 2:4 mask and what
torch.sparse's semi-structured classes accept.
"""


import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.utils.prune as prune
from bankkeys import right_choices, topic_questions

TOPIC = "pruning"



def _zeros(t: torch.Tensor) -> int:
    return int((t == 0).sum().item())


@pytest.mark.verifies("prune-torch-reparam")
def test_l1_unstructured_reparametrises_weight():
    torch.manual_seed(0)
    m = nn.Linear(10, 10)
    original = m.weight
    prune.l1_unstructured(m, "weight", amount=0.3)

    bytes_before = sum(t.numel() * t.element_size() for t in (original, m.bias))
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_orig"]  # choice 0: true
    assert [n for n, _ in m.named_buffers()] == ["weight_mask"]  # choice 1: false, a buffer
    assert not isinstance(m.weight_mask, nn.Parameter)  # choice 1: false
    assert m.weight_orig is original  # same Parameter object: an existing optimizer still holds it
    assert not isinstance(m.weight, nn.Parameter)  # choice 2: false; choice 3: true
    assert _zeros(m.weight_mask) == 30
    assert torch.equal(m.weight, m.weight_orig * m.weight_mask)  # choice 3: true
    assert len(m._forward_pre_hooks) == 1  # choice 3: the pre-hook that recomputes it
    # choice 5: false. Memory goes up: dense orig, dense mask and the computed weight
    held = [m.weight_orig, m.weight_mask, m.weight, m.bias]
    assert sum(t.numel() * t.element_size() for t in held) > 2 * bytes_before
    assert set(m.state_dict()) == {"bias", "weight_orig", "weight_mask"}

    # the pruned weights are the 30 smallest in absolute value
    kept = m.weight_orig[m.weight_mask.bool()].abs()
    dropped = m.weight_orig[~m.weight_mask.bool()].abs()
    assert dropped.max() <= kept.min()

    m(torch.randn(3, 10)).sum().backward()
    assert torch.all(m.weight_orig.grad[m.weight_mask == 0] == 0)  # choice 4: true
    assert torch.all(m.weight_orig.grad[m.weight_mask == 1] != 0)
    assert right_choices(TOPIC, "prune-torch-reparam") == {0, 3, 4}


@pytest.mark.verifies("prune-iterative-amount")
def test_second_amount_is_a_fraction_of_the_remaining_weights():
    torch.manual_seed(0)
    m = nn.Linear(10, 10)
    prune.l1_unstructured(m, "weight", amount=0.3)
    assert _zeros(m.weight) == 30
    prune.l1_unstructured(m, "weight", amount=0.5)
    assert _zeros(m.weight) == topic_questions(TOPIC)["prune-iterative-amount"].answer
    hook = next(iter(m._forward_pre_hooks.values()))
    assert isinstance(hook, prune.PruningContainer)


@pytest.mark.verifies("prune-remove")
def test_remove_makes_pruning_permanent():
    torch.manual_seed(0)
    m = nn.Linear(10, 10)
    original = m.weight
    prune.l1_unstructured(m, "weight", amount=0.4)
    before_pruning = m.weight_orig.detach().clone()
    expected = (m.weight_orig * m.weight_mask).detach().clone()
    prune.remove(m, "weight")

    # choice 0: true
    assert isinstance(m.weight, nn.Parameter)
    assert m.weight is original
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight"]
    assert list(m.named_buffers()) == []
    assert len(m._forward_pre_hooks) == 0
    assert not prune.is_pruned(m)
    assert torch.equal(m.weight.detach(), expected)
    assert set(m.state_dict()) == {"weight", "bias"}
    # choice 1: false, the zeros stay
    assert _zeros(m.weight) == 40
    assert not torch.equal(m.weight.detach(), before_pruning)
    assert m.weight.layout == torch.strided  # choice 2: false, still dense
    assert m.weight.shape == (10, 10)  # choice 3: false, same shape
    assert right_choices(TOPIC, "prune-remove") == {0}


@pytest.mark.verifies("prune-global-unstructured")
def test_global_unstructured_uses_one_threshold_across_layers():
    torch.manual_seed(0)
    a, b = nn.Linear(10, 10), nn.Linear(10, 10)
    with torch.no_grad():
        b.weight.mul_(10)
    prune.global_unstructured(  # choice 3: false, different scales raise nothing
        [(a, "weight"), (b, "weight")], pruning_method=prune.L1Unstructured, amount=0.5
    )
    za, zb = _zeros(a.weight), _zeros(b.weight)
    assert za + zb == 100
    assert 85 <= za <= 95 and 5 <= zb <= 15  # choice 2: true
    assert za != 50  # choice 0: false
    assert zb < 50  # choice 1: false, b keeps most of its larger weights
    # one shared threshold: every pruned weight is no larger than every kept weight, across layers
    pruned = torch.cat([a.weight_orig[a.weight_mask == 0], b.weight_orig[b.weight_mask == 0]]).abs()
    kept = torch.cat([a.weight_orig[a.weight_mask == 1], b.weight_orig[b.weight_mask == 1]]).abs()
    assert pruned.max() <= kept.min()
    assert right_choices(TOPIC, "prune-global-unstructured") == {2}


@pytest.mark.verifies("prune-ln-structured-name")
def test_ln_structured_zeroes_whole_output_channels():
    torch.manual_seed(0)
    conv = nn.Conv2d(3, 8, 3)
    prune.ln_structured(conv, "weight", amount=0.5, n=2, dim=0)
    per_filter_zeros = (conv.weight == 0).flatten(1).sum(1)
    # 4 filters are entirely zero, the other 4 untouched; the shape does not change
    assert sorted(per_filter_zeros.tolist()) == [0] * 4 + [27] * 4
    assert conv.weight.shape == (8, 3, 3, 3)
    norms = conv.weight_orig.flatten(1).norm(dim=1)
    removed = per_filter_zeros == 27
    assert norms[removed].max() <= norms[~removed].min()


def _two_four_mask(w: torch.Tensor) -> torch.Tensor:
    groups = w.reshape(-1, 4)
    keep = groups.abs().topk(2, dim=1).indices
    mask = torch.zeros_like(groups).scatter_(1, keep, 1.0)
    return mask.reshape(w.shape)


@pytest.mark.verifies("prune-2-4-mask")
def test_two_four_pruning_of_the_example_row():
    row = torch.tensor([0.9, -0.1, 0.4, -0.7, 0.05, 0.3, -0.2, 0.6])
    pruned = row * _two_four_mask(row)
    assert torch.equal(pruned, torch.tensor([0.9, 0.0, 0.0, -0.7, 0.0, 0.3, 0.0, 0.6]))  # choice 1: true
    assert ((pruned.reshape(-1, 4) != 0).sum(1) == 2).all()
    for wrong in ([0.9, 0, 0.4, -0.7, 0, 0, 0, 0.6],  # choice 0: false
                  [0.9, 0, 0.4, 0, 0, 0.3, 0, 0.6],  # choice 2: false
                  [0, -0.1, 0.4, 0, 0.05, 0, -0.2, 0]):  # choice 3: false
        assert not torch.equal(pruned, torch.tensor(wrong))

    # keeping the row's 4 largest magnitudes (the tempting answer) breaks the 2:4 pattern
    m = nn.Linear(8, 1, bias=False)
    with torch.no_grad():
        m.weight.copy_(row[None])
    prune.l1_unstructured(m, "weight", amount=0.5)
    unstructured = m.weight.detach()[0]
    assert torch.equal(unstructured, torch.tensor([0.9, 0.0, 0.4, -0.7, 0.0, 0.0, 0.0, 0.6]))
    assert (unstructured.reshape(-1, 4) != 0).sum(1).tolist() == [3, 1]
    assert right_choices(TOPIC, "prune-2-4-mask") == {1}


# --- the cards ---


@pytest.mark.verifies("prune-unstructured-no-speedup")
def test_pruned_tensors_stay_dense_and_reparametrised():
    torch.manual_seed(0)
    m = nn.Linear(100, 50)
    dense_bytes = m.weight.numel() * m.weight.element_size()
    prune.l1_unstructured(m, "weight", amount=0.9)
    assert _zeros(m.weight) == 4500  # 90% zeros...
    # ...held as three dense tensors: weight_orig (parameter), weight_mask (buffer), weight (computed)
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in m.named_buffers()] == ["weight_mask"]
    for t in (m.weight_orig, m.weight_mask, m.weight):
        assert t.layout == torch.strided and t.shape == (50, 100)
        assert t.numel() * t.element_size() == dense_bytes
    assert len(m._forward_pre_hooks) == 1  # recomputes weight = orig * mask before every forward
    with torch.no_grad():
        m.weight_orig.add_(1.0)
        m(torch.randn(2, 100))
    assert torch.equal(m.weight, m.weight_orig * m.weight_mask)
    # prune.remove bakes the zeros in: one dense Parameter again, same size
    prune.remove(m, "weight")
    assert isinstance(m.weight, nn.Parameter) and m.weight.layout == torch.strided
    assert m.weight.numel() * m.weight.element_size() == dense_bytes and _zeros(m.weight) == 4500
    assert not hasattr(m, "weight_mask") and len(m._forward_pre_hooks) == 0
    # stored sparsely, the zeros do shrink the file: CSR keeps the 10% non-zeros, but its int64
    # indices cost twice the values (the index overhead that also slows sparse kernels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Sparse CSR tensor support is in beta state"
        csr = m.weight.detach().to_sparse_csr()
    values = csr.values().numel() * csr.values().element_size()
    csr_bytes = values + sum(t.numel() * t.element_size() for t in (csr.col_indices(), csr.crow_indices()))
    assert values == 0.1 * dense_bytes and csr_bytes < 0.35 * dense_bytes


@pytest.mark.verifies("prune-2-4-sparsity")
def test_two_four_pattern_mask_and_torch_api():
    from torch.sparse import (
        SparseSemiStructuredTensor,
        SparseSemiStructuredTensorCUSPARSELT,
        SparseSemiStructuredTensorCUTLASS,
        to_sparse_semi_structured,
    )

    torch.manual_seed(0)
    w = torch.randn(64, 128)
    groups = w.abs().reshape(64, 32, 4)  # groups of 4 along the reduction (input) dimension
    keep = torch.zeros_like(groups, dtype=torch.bool).scatter_(-1, groups.topk(2, dim=-1).indices, True)
    mask = keep.reshape(64, 128).float()
    assert mask.mean().item() == 0.5 and (mask.reshape(64, 32, 4).sum(-1) == 2).all()
    # the kept two are the two largest magnitudes of their group
    kept_min = torch.where(keep, groups, torch.inf).amin(-1)
    dropped_max = torch.where(keep, -torch.inf, groups).amax(-1)
    assert (kept_min >= dropped_max).all()
    # a 50% unstructured mask (global magnitude) breaks the pattern in many groups
    unstructured = (w.abs() >= w.abs().median()).float()
    assert (unstructured.reshape(64, 32, 4).sum(-1) != 2).any()
    # retraining with the mask fixed keeps the pattern
    layer = nn.Linear(128, 64)
    prune.custom_from_mask(layer, "weight", mask)
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        layer(torch.randn(8, 128)).pow(2).mean().backward()
        opt.step()
    assert torch.equal(layer.weight == 0, mask == 0)
    # the torch API: CUDA only, 2-D; dtypes by backend, cuSPARSELt the default
    with pytest.raises(RuntimeError, match="Only CUDA tensors"):
        to_sparse_semi_structured((w * mask).half())
    assert SparseSemiStructuredTensor._FORCE_CUTLASS is False
    common = {torch.float16, torch.bfloat16, torch.int8}
    assert set(SparseSemiStructuredTensorCUSPARSELT._DTYPE_SHAPE_CONSTRAINTS) == common | {torch.float8_e4m3fn}
    assert set(SparseSemiStructuredTensorCUTLASS._DTYPE_SHAPE_CONSTRAINTS) == common | {torch.float32}


@pytest.mark.verifies("prune-torch-reparam")
def test_pruned_positions_stay_zero_in_the_forward_even_when_weight_orig_moves():
    """The explanation: a zero gradient at weight_orig does not keep it still (momentum from before
    the pruning moves it), but the pre-hook multiplies by the mask before every forward."""
    torch.manual_seed(0)
    m = nn.Linear(10, 10)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(4, 10)
    for _ in range(3):  # momentum built up before the pruning
        opt.zero_grad()
        m(x).pow(2).mean().backward()
        opt.step()
    prune.l1_unstructured(m, "weight", amount=0.3)  # weight_orig is the same Parameter: opt still holds it
    pruned = m.weight_mask == 0
    before = m.weight_orig.detach().clone()
    opt.zero_grad()
    m(x).pow(2).mean().backward()
    assert torch.all(m.weight_orig.grad[pruned] == 0)
    opt.step()
    assert (m.weight_orig.detach()[pruned] != before[pruned]).all()  # moved by the momentum buffer
    m(x)
    assert torch.all(m.weight[pruned] == 0)  # but every forward sees an exact 0


@pytest.mark.verifies("prune-iterative-amount")
def test_an_int_amount_after_a_first_pruning_counts_among_the_unpruned():
    torch.manual_seed(0)
    m = nn.Linear(10, 10)
    prune.l1_unstructured(m, "weight", amount=0.3)
    prune.l1_unstructured(m, "weight", amount=10)
    assert _zeros(m.weight) == 40


@pytest.mark.verifies("prune-int-amount-count")
def test_an_int_amount_is_a_count_of_weights():
    import yaml

    amounts = yaml.safe_load("amounts: [0, 0.25, 0.5, 0.75, 1]")["amounts"]
    assert type(amounts[-1]) is int and type(amounts[0]) is int  # YAML reads 1 and 0 as ints
    zeros = {}
    for a in amounts:
        torch.manual_seed(0)
        layer = nn.Linear(100, 10)
        prune.l1_unstructured(layer, "weight", amount=a)  # choice 1: false, an int raises nothing
        zeros[a] = _zeros(layer.weight)
    assert zeros == {0: 0, 0.25: 250, 0.5: 500, 0.75: 750, 1: 1}
    assert zeros[amounts[-1]] == 1  # choice 3: true; choices 0 and 2: false (not 1000, not 10)
    # the one weight zeroed is the smallest in magnitude
    assert layer.weight_orig[layer.weight_mask == 0].abs().item() == layer.weight_orig.abs().min().item()
    torch.manual_seed(0)
    layer = nn.Linear(100, 10)
    prune.l1_unstructured(layer, "weight", amount=1.0)
    assert _zeros(layer.weight) == 1000  # only the float 1.0 prunes everything
    # the limits the explanation names: a float above 1, an int above the size, a string
    for bad, error in ((2.0, ValueError), (1001, ValueError), ("0.5", TypeError), (None, TypeError)):
        with pytest.raises(error):
            prune.l1_unstructured(nn.Linear(100, 10), "weight", amount=bad)
    # global_unstructured: an int counts weights over all listed tensors together
    a, b = nn.Linear(10, 10), nn.Linear(10, 10)
    prune.global_unstructured([(a, "weight"), (b, "weight")], pruning_method=prune.L1Unstructured, amount=3)
    assert _zeros(a.weight) + _zeros(b.weight) == 3
    assert right_choices(TOPIC, "prune-int-amount-count") == {3}


def _trained_then_zeroed(seed=0):
    """A small model trained 5 steps with AdamW, then one layer's 50% smallest weights zeroed in place."""
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    x, y = torch.randn(32, 8), torch.randint(0, 4, (32,))
    for _ in range(5):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    w = model[0].weight
    mask = (w.abs() > w.abs().median()).float()
    with torch.no_grad():
        w.mul_(mask)
    return model, opt, w, mask, x, y


def _fine_tune(model, opt, x, y, steps=1):
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()


@pytest.mark.verifies("prune-zeroing-regrows")
def test_zeroing_once_regrows_and_what_keeps_weights_pruned():
    model, opt, w, mask, x, y = _trained_then_zeroed()
    pruned = mask == 0
    assert int(pruned.sum()) == 64
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    # choice 5: false. The gradient at an exactly-zero weight is not zero
    assert (w.grad[pruned] != 0).float().mean() > 0.9
    opt.step()
    assert (w.detach()[pruned] != 0).float().mean() > 0.9  # choice 0: true, nearly all regrown
    # plain SGD without momentum moves them too
    model, _, w, mask, x, y = _trained_then_zeroed()
    _fine_tune(model, torch.optim.SGD(model.parameters(), lr=0.1), x, y)
    assert (w.detach()[mask == 0] != 0).float().mean() > 0.9
    # choice 1: false. Decoupled weight decay alone leaves a zero at zero (zero gradient, fresh state)
    p = nn.Parameter(torch.tensor([0.0, 1.0]))
    decay = torch.optim.AdamW([p], lr=0.1, weight_decay=0.5)
    p.grad = torch.zeros(2)
    decay.step()
    assert p.detach().tolist() == [0.0, pytest.approx(0.95)]
    # choice 2: false. Masked gradient, carried-over moments: they move anyway
    model, opt, w, mask, x, y = _trained_then_zeroed()
    w.register_hook(lambda g: g * mask)
    _fine_tune(model, opt, x, y)
    assert (w.detach()[mask == 0] != 0).float().mean() > 0.9
    # choice 3: true. Masked gradient and a fresh AdamW: exactly 0, step after step
    model, _, w, mask, x, y = _trained_then_zeroed()
    w.register_hook(lambda g: g * mask)
    _fine_tune(model, torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01), x, y, steps=5)
    assert torch.all(w.detach()[mask == 0] == 0)
    # choice 4: true. torch's reparametrisation with the carried-over optimizer: weight_orig drifts,
    # every forward still gets an exact 0
    model, opt, w, mask, x, y = _trained_then_zeroed()
    prune.custom_from_mask(model[0], "weight", mask)
    _fine_tune(model, opt, x, y, steps=3)
    assert (model[0].weight_orig.detach()[mask == 0] != 0).any()
    model(x)
    assert torch.all(model[0].weight[mask == 0] == 0)
    # the explanation's SGD-momentum figure: a masked gradient and a buffer of 0.05 move it by 0.045 in all
    q = nn.Parameter(torch.zeros(1))
    sgd = torch.optim.SGD([q], lr=0.1, momentum=0.9)
    q.grad = torch.full((1,), 0.05)
    sgd.step()  # the buffer is now 0.05 (this step moved q by 0.005)
    start = q.item()
    for _ in range(400):
        q.grad = torch.zeros(1)
        sgd.step()
    assert start - q.item() == pytest.approx(0.045, rel=1e-4)
    assert right_choices(TOPIC, "prune-zeroing-regrows") == {0, 3, 4}


class _Masked(nn.Module):
    def __init__(self, linear, mask, as_parameter=True):
        super().__init__()
        self.linear = linear
        if as_parameter:
            self.mask = nn.Parameter(mask.clone())
        else:
            self.register_buffer("mask", mask.clone())

    def forward(self, x):
        return torch.nn.functional.linear(x, self.linear.weight * self.mask, self.linear.bias)


@pytest.mark.verifies("prune-mask-buffer")
def test_a_mask_held_as_a_parameter_gets_trained():
    """Choice 3 is about `.cuda()`; on a CPU the same `Module._apply` path is shown with `.to(dtype)`,
    which converts parameters and buffers and leaves plain tensor attributes as they were."""
    torch.manual_seed(0)
    linear = nn.Linear(8, 4)
    mask = (linear.weight.abs() > linear.weight.abs().median()).float()
    model = _Masked(linear, mask)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(16, 8)
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    # choice 1: false. The mask's gradient is weight * dL/dw, non-zero at the pruned positions
    assert (model.mask.grad[mask == 0] != 0).all()
    opt.step()
    for _ in range(2):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    entries = model.mask.detach()
    assert ((entries != 0) & (entries != 1)).all()  # choice 0: true, entries drift off 0 and 1
    used = (model.linear.weight * model.mask).detach()
    assert (used[mask == 0] != 0).all()  # ...and the pruned weights are back in the forward
    # choice 2: false. A parameter is saved in the state_dict
    assert "mask" in model.state_dict()
    # choice 3: false. Module conversions move parameters and buffers alike; a plain attribute stays
    model.plain = mask.clone()
    model.to(torch.float64)
    assert model.mask.dtype == torch.float64 and model.plain.dtype == torch.float32
    # the buffer version: saved, converted, never trained
    buffered = _Masked(nn.Linear(8, 4), mask, as_parameter=False)
    assert "mask" in buffered.state_dict() and all(p is not buffered.mask for p in buffered.parameters())
    buffered.to(torch.float64)
    assert buffered.mask.dtype == torch.float64
    assert "mask" not in dict(buffered.named_parameters())
    # nn.Parameter(t) shares t's storage, hence the clone in the prompt
    t = torch.ones(3)
    assert nn.Parameter(t).data_ptr() == t.data_ptr()
    assert right_choices(TOPIC, "prune-mask-buffer") == {0}
