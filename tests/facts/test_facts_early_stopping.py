"""Facts taught by questions/early-stopping.yaml, checked with torch where torch can compute them.

Each verified single question's test settles every choice (`# choice N` beside the assertion, N
its index in the file) and then checks that the file's key is the one choice found true. Numeric
questions compute the keyed value themselves. That stopping GD early acts like L2 regularisation
(es-gd-filter-factors) is Bishop (1995) and Goodfellow et al. ("Deep Learning", 2016, section 7.8);
the test checks the factors themselves. The cards' tests check what can be run (torch's
ReduceLROnPlateau, live state_dicts, the statistics of noisy checks simulated with torch); Keras and
Lightning's stopping rule is re-created in `_early_stopping`, and the observation that validation
NLL can climb while the error falls is Guo et al. (2017), shown here on a constructed example.
"""

import copy
import io
import math

import pytest
import torch
import torch.nn.functional as F
from bankkeys import right_choices, topic_questions

TOPIC = "early-stopping"



def _early_stopping(losses, patience, min_delta):
    """Min-mode early stopping as Keras and Lightning count it.

    Returns (epoch training stopped at or None, epoch of the best score), both 1-based.
    """
    best, best_epoch, bad = None, None, 0
    for epoch, loss in enumerate(losses, start=1):
        if best is None or loss < best - min_delta:
            best, best_epoch, bad = loss, epoch, 0
        else:
            bad += 1
            if bad >= patience:
                return epoch, best_epoch
    return None, best_epoch


VAL_LOSSES = [1.00, 0.90, 0.86, 0.855, 0.852, 0.83, 0.825, 0.822, 0.821, 0.70]


@pytest.mark.verifies("es-patience-min-delta")
def test_patience_and_min_delta_simulation():
    losses = torch.tensor(VAL_LOSSES, dtype=torch.float64).tolist()
    assert _early_stopping(losses, patience=3, min_delta=0.01) == (9, 6)
    assert _early_stopping(losses, patience=3, min_delta=0.01)[0] == topic_questions(TOPIC)["es-patience-min-delta"].answer
    # without min_delta every tiny decrease resets the counter and training never stops
    assert _early_stopping(losses, patience=3, min_delta=0.0) == (None, 10)


@pytest.mark.verifies("es-state-dict-alias")
def test_state_dict_is_a_live_view_and_deepcopy_is_a_snapshot():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    at_best = model.weight.detach().clone()
    best_alias = model.state_dict()
    best_copy = copy.deepcopy(model.state_dict())
    best_clone = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model(torch.ones(2, 3)).sum().backward()
    optimizer.step()  # updates the parameters in place
    assert not torch.equal(model.weight, at_best)
    assert best_alias["weight"].data_ptr() == model.weight.data_ptr()  # choice 2: true
    assert torch.equal(best_alias["weight"], model.weight)  # "best" silently followed training
    assert torch.equal(best_copy["weight"], at_best)
    assert torch.equal(best_clone["weight"], at_best)
    # choice 1: false. Trainable parameters are in the state_dict
    assert model.weight.requires_grad and set(best_alias) == {"weight", "bias"}
    # choice 0 and choice 3: false. A snapshot of the same model object loads, with no optimizer state
    model.load_state_dict(best_copy)
    assert torch.equal(model.weight, at_best)
    assert right_choices(TOPIC, "es-state-dict-alias") == {2}


@pytest.mark.verifies("es-reduce-lr-on-plateau-patience")
def test_reduce_lr_on_plateau_waits_patience_plus_one_bad_epochs():
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([param], lr=1.0)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=2)
    first_drop = None
    for call, loss in enumerate([1.0, 0.9, 0.9, 0.9, 0.9, 0.9], start=1):
        scheduler.step(loss)
        if first_drop is None and optimizer.param_groups[0]["lr"] < 1.0:
            first_drop = call
    assert first_drop == topic_questions(TOPIC)["es-reduce-lr-on-plateau-patience"].answer
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.1)  # default factor
    # the same curve under Keras/Lightning-style counting with patience=2 stops at epoch 4
    assert _early_stopping([1.0, 0.9, 0.9, 0.9, 0.9, 0.9], patience=2, min_delta=0.0)[0] == 4


@pytest.mark.verifies("es-loss-vs-accuracy")
def test_accuracy_and_loss_can_both_go_up():
    labels = torch.tensor([0, 0, 0, 0])
    # earlier epoch: 2 of 4 right, every prediction hedged
    early = torch.tensor([[0.5, 0.0], [0.5, 0.0], [0.0, 0.5], [0.0, 0.5]])
    # later epoch: 3 of 4 right, but the one mistake is made with great confidence
    late = torch.tensor([[2.0, 0.0], [2.0, 0.0], [2.0, 0.0], [0.0, 6.0]])
    accuracy = lambda logits: (logits.argmax(1) == labels).float().mean().item()
    assert accuracy(early) == 0.5 and accuracy(late) == 0.75
    # choice 3: true, and choice 0: false. More right, yet a higher loss, from one confident mistake
    assert F.cross_entropy(late, labels).item() > F.cross_entropy(early, labels).item()
    assert F.cross_entropy(late[:3], labels[:3]).item() < F.cross_entropy(early[:2], labels[:2]).item()
    # the figures the explanation quotes
    assert F.cross_entropy(early, labels).item() == pytest.approx(0.72, abs=0.005)
    assert F.cross_entropy(late, labels).item() == pytest.approx(1.60, abs=0.005)
    p_early, p_late = early.softmax(1), late.softmax(1)
    # choice 1: false. The examples right in both epochs got a higher probability on their label
    assert (p_late[:2, 0] > p_early[:2, 0]).all()
    # choice 2: false. Every prediction got more confident, mistakes included
    assert (p_late.max(1).values > p_early.max(1).values).all()
    assert right_choices(TOPIC, "es-loss-vs-accuracy") == {3}


@pytest.mark.verifies("es-gd-filter-factors")
def test_gradient_descent_from_zero_applies_spectral_filter_factors():
    torch.manual_seed(0)
    x = torch.randn(20, 4, dtype=torch.float64) * torch.tensor([3.0, 1.0, 0.3, 0.1], dtype=torch.float64)
    y = torch.randn(20, dtype=torch.float64)
    hessian = x.T @ x
    eigvals, eigvecs = torch.linalg.eigh(hessian)
    w_star = torch.linalg.solve(hessian, x.T @ y)
    lr = 0.5 / eigvals.max().item()
    w = torch.zeros(4, dtype=torch.float64, requires_grad=True)
    steps, norms = 50, []
    for _ in range(steps):
        loss = 0.5 * (x @ w - y).pow(2).sum()
        (grad,) = torch.autograd.grad(loss, w)
        with torch.no_grad():
            w -= lr * grad
        norms.append(w.norm().item())
    factors = 1 - (1 - lr * eigvals) ** steps
    along = eigvecs.T @ w.detach()
    assert torch.allclose(along, factors * (eigvecs.T @ w_star), atol=1e-10)  # choice 0: true
    alpha = 1 / (lr * steps)
    for wrong in (eigvals / (eigvals + alpha),  # choice 1: false, ridge's factor only approximates it
                  (1 - lr * eigvals) ** steps,  # choice 2: false, the missing fraction
                  lr * eigvals * steps):  # choice 3: false, the small-t approximation
        assert not torch.allclose(along, wrong * (eigvecs.T @ w_star), atol=1e-3)
    assert (lr * eigvals * steps).max() > 1  # the linear form even exceeds 1
    assert right_choices(TOPIC, "es-gd-filter-factors") == {0}
    # large-eigenvalue directions are fitted, small ones barely moved: like ridge's lam / (lam + alpha)
    assert factors[-1] > 0.99 and factors[0] < 0.1
    assert all(b >= a - 1e-12 for a, b in zip(norms, norms[1:]))  # the weight norm only grows


# --- the cards ---


@pytest.mark.verifies("es-basics")
def test_stopping_leaves_the_weights_patience_checks_past_the_best():
    stopped, best = _early_stopping(VAL_LOSSES, patience=3, min_delta=0.01)
    assert stopped - best == 3  # the last weights are `patience` checks past the best ones
    # a run that never stops still has its best epoch earlier than the last one
    never, best_epoch = _early_stopping([1.0, 0.5, 0.6, 0.7], patience=5, min_delta=0.0)
    assert never is None and best_epoch == 2
    # keeping "the best weights" as model.state_dict() keeps a live view, not a copy
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    alias, snapshot = model.state_dict(), copy.deepcopy(model.state_dict())
    model(torch.ones(2, 3)).sum().backward()
    optimizer.step()
    assert torch.equal(alias["weight"], model.weight)
    assert not torch.equal(snapshot["weight"], model.weight)


@pytest.mark.verifies("es-validation-leakage")
def test_best_of_many_noisy_checks_is_biased_upwards():
    """A model whose true accuracy is 0.8 at every check: the best observed score overshoots 0.8,
    more with more checks and with a smaller validation set."""
    gen = torch.Generator().manual_seed(0)
    true_acc, trials = 0.8, 4000

    def mean_best(n_val, checks):
        correct = torch.binomial(torch.full((trials, checks), float(n_val)),
                                 torch.full((trials, checks), true_acc), generator=gen)
        return (correct / n_val).max(dim=1).values.mean().item()

    small_few, small_many = mean_best(200, 5), mean_best(200, 50)
    large_many = mean_best(5000, 50)
    assert small_few > true_acc + 0.01
    assert small_many > small_few + 0.01  # more checks, more bias
    assert small_many - true_acc > 3 * (large_many - true_acc)  # a bigger set, less bias


@pytest.mark.verifies("es-noisy-curves")
def test_accuracy_standard_error_and_loss_rising_with_accuracy():
    se = lambda p, n: math.sqrt(p * (1 - p) / n)
    assert 100 * se(0.9, 1000) == pytest.approx(0.95, abs=0.005)
    assert 100 * se(0.9, 10_000) == pytest.approx(0.30, abs=0.005)
    # checked empirically: the spread of accuracies measured on 1000 examples
    gen = torch.Generator().manual_seed(0)
    measured = torch.binomial(torch.full((20000,), 1000.0), torch.full((20000,), 0.9), generator=gen) / 1000
    assert measured.std().item() == pytest.approx(se(0.9, 1000), rel=0.03)
    # validation loss can rise while accuracy improves: one confident mistake outweighs it
    labels = torch.zeros(4, dtype=torch.long)
    earlier = torch.tensor([[0.5, 0.0], [0.5, 0.0], [0.0, 0.5], [0.0, 0.5]])
    later = torch.tensor([[2.0, 0.0], [2.0, 0.0], [2.0, 0.0], [0.0, 6.0]])
    accuracy = lambda logits: (logits.argmax(1) == labels).float().mean().item()
    assert accuracy(later) > accuracy(earlier)
    assert F.cross_entropy(later, labels).item() > F.cross_entropy(earlier, labels).item()


@pytest.mark.verifies("es-lr-schedule-interaction")
def test_reduce_on_plateau_timing_against_early_stopping_patience():
    def cuts(patience, cooldown, epochs=12):
        param = torch.nn.Parameter(torch.zeros(1))
        optimizer = torch.optim.SGD([param], lr=1.0)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=patience, cooldown=cooldown)
        found, lr = [], 1.0
        for epoch in range(1, epochs + 1):
            scheduler.step(1.0)  # a flat plateau from epoch 1
            if optimizer.param_groups[0]["lr"] < lr:
                found.append(epoch)
                lr = optimizer.param_groups[0]["lr"]
        return found

    # torch cuts after patience + 1 bad epochs: with patience=2, at epoch 4 (epochs 2-4 are bad)
    assert cuts(patience=2, cooldown=0)[:2] == [4, 7]
    # a cooldown delays every later cut by its length
    assert cuts(patience=2, cooldown=2)[:2] == [4, 9]
    # Keras/Lightning-style early stopping with patience 3 stops at that same epoch 4,
    # so the run never trains at the reduced lr: its patience must be well above the scheduler's
    assert _early_stopping([1.0] * 12, patience=3, min_delta=0.0)[0] == 4
    assert _early_stopping([1.0] * 12, patience=2, min_delta=0.0)[0] == 3


# --- non-finite metrics, mode max, and copies that are not copies ---


class _Stopper:
    """The stopper of es-non-finite-metric; `negated` writes line (A) as `not loss >= ...`."""

    def __init__(self, patience=10, min_delta=0.0, best=float("inf"), negated=False):
        self.patience, self.min_delta, self.best, self.bad, self.negated = patience, min_delta, best, 0, negated

    def step(self, loss):
        improves = (not loss >= self.best - self.min_delta) if self.negated else loss < self.best - self.min_delta
        if improves:
            self.best, self.bad = loss, 0
        else:
            self.bad += 1
        return self.bad >= self.patience


def _run(stopper, losses):
    """The 1-based epoch at which step() first returns True, or None."""
    for epoch, loss in enumerate(losses, start=1):
        if stopper.step(loss):
            return epoch
    return None


@pytest.mark.verifies("es-non-finite-metric")
def test_nan_and_inf_metrics_against_comparisons():
    nan, inf = float("nan"), float("inf")
    curve = [1.0 - 0.01 * e for e in range(30)] + [nan] * 30  # epoch 30 sets the best, then nan
    stopper = _Stopper()
    assert _run(stopper, curve) == 40  # choice 0: true, ten more epochs of nan
    assert stopper.best == curve[29]
    # choice 1: false. Comparing with nan raises nothing, in Python or torch
    assert (nan < 1.0) is False and (nan >= 1.0) is False and (nan != nan) is True
    assert bool(torch.tensor(nan) < 1.0) is False
    # choice 2: true. The negated test takes nan as best, then every epoch "improves"
    negated = _Stopper(negated=True)
    assert _run(negated, curve) is None
    assert math.isnan(negated.best) and negated.bad == 0
    assert not (0.5 >= negated.best)  # even a finite loss after it counts as an improvement
    # choice 3: false. isnan misses inf, which then just counts as one more epoch without improvement
    assert not math.isnan(inf) and not math.isfinite(inf) and not math.isfinite(nan)
    inf_curve = [1.0 - 0.01 * e for e in range(30)] + [inf] * 30
    assert _run(_Stopper(), inf_curve) == 40
    # choice 4: true. In max mode inf beats any best
    best, min_delta = 0.93, 0.0
    assert inf > best + min_delta
    # choice 5: false. Starting from nan, nothing ever improves
    from_nan = _Stopper(best=nan)
    assert _run(from_nan, [1.0, 0.5, 0.2] + [0.1] * 10) == 10 and math.isnan(from_nan.best)
    assert right_choices(TOPIC, "es-non-finite-metric") == {0, 2, 4}


ACCURACIES = [0.610, 0.650, 0.652, 0.648, 0.661, 0.664, 0.657, 0.665, 0.663, 0.672]


def _max_mode(values, patience, min_delta, improves=lambda v, best, d: v > best + d, stop_when=lambda bad, p: bad >= p):
    """Early stopping on a metric to maximise: (1-based stop epoch or None, best epoch)."""
    best, best_epoch, bad = None, None, 0
    for epoch, value in enumerate(values, start=1):
        if best is None or improves(value, best, min_delta):
            best, best_epoch, bad = value, epoch, 0
        else:
            bad += 1
            if stop_when(bad, patience):
                return epoch, best_epoch
    return None, best_epoch


@pytest.mark.verifies("es-mode-max-min-delta")
def test_mode_max_adds_min_delta_to_best():
    assert _max_mode(ACCURACIES, 3, 0.005) == (8, 5)
    assert _max_mode(ACCURACIES, 3, 0.005)[0] == topic_questions(TOPIC)["es-mode-max-min-delta"].answer
    # no comparison sits on a float tie: every margin is at least 0.001
    best = [0.610, 0.650, 0.650, 0.650, 0.661, 0.661, 0.661, 0.661]
    assert min(abs(v - (b + 0.005)) for v, b in zip(ACCURACIES[1:8], best)) >= 0.001 - 1e-12
    # the slips the explanation names
    assert _max_mode(ACCURACIES, 3, 0.005, improves=lambda v, b, d: v > b - d)[0] is None  # sign from min mode
    wrong_sign = [0.610]
    for v in ACCURACIES[1:]:
        if v > wrong_sign[-1] - 0.005:
            wrong_sign.append(v)
    assert 0.648 in wrong_sign and wrong_sign[wrong_sign.index(0.648) - 1] == 0.652  # best drifts down
    assert _max_mode(ACCURACIES, 3, 0.005, improves=lambda v, b, d: v < b - d)[0] == 4  # min-mode test left in
    assert _max_mode(ACCURACIES, 3, 0.0)[0] is None  # min_delta ignored
    assert _max_mode(ACCURACIES, 3, 0.005, stop_when=lambda bad, p: bad > p)[0] == 9  # counter must exceed
    # the signed form of the explanation is the same rule in both modes
    signed = lambda sign: lambda v, b, d: sign * v < sign * b - d  # noqa: E731
    assert _max_mode(ACCURACIES, 3, 0.005, improves=signed(-1)) == (8, 5)
    assert _early_stopping(VAL_LOSSES, 3, 0.01) == _max_mode(VAL_LOSSES, 3, 0.01, improves=signed(1))


def _bn_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))


def _train_in_place(model, steps=3):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model.train()
    for _ in range(steps):
        optimizer.zero_grad()
        model(torch.randn(8, 4)).pow(2).mean().backward()
        optimizer.step()  # parameters updated in place; the BatchNorm forward updated its buffers in place


@pytest.mark.verifies("es-snapshot-copies")
def test_which_snapshots_survive_in_place_training():
    model = _bn_model()
    sd = model.state_dict()
    at_best = {k: v.clone() for k, v in sd.items()}
    kept = {
        0: {k: v.detach() for k, v in sd.items()},
        1: copy.deepcopy(sd),
        2: dict(sd),
        3: {k: v.data for k, v in sd.items()},
        4: {k: v.detach().clone() for k, v in sd.items()},
        5: {n: p.detach().clone() for n, p in model.named_parameters()},
    }
    shallow = copy.copy(sd)
    _train_in_place(model)
    holds_best = {i: set(snap) == set(at_best) and all(torch.equal(snap[k], at_best[k]) for k in at_best)
                  for i, snap in kept.items()}
    # choices 0, 2 and 3: false, they share storage with the live tensors
    assert not holds_best[0] and not holds_best[2] and not holds_best[3]
    assert kept[0]["0.weight"].data_ptr() == model[0].weight.data_ptr() == kept[3]["0.weight"].data_ptr()
    assert kept[2]["0.weight"] is sd["0.weight"] and shallow["0.weight"] is sd["0.weight"]
    assert holds_best[1] and holds_best[4]  # choices 1 and 4: true
    # choice 5: false. Real copies, but no buffers: BatchNorm's statistics would stay the last epoch's
    assert not holds_best[5]
    assert all(torch.equal(kept[5][n], at_best[n]) for n in kept[5])
    assert {"1.running_mean", "1.running_var", "1.num_batches_tracked"} <= set(at_best) - set(kept[5])
    assert not torch.equal(model[1].running_mean, at_best["1.running_mean"])  # they did move
    # conversions with nothing to do return the tensor itself; to(copy=True) and torch.save copy
    w = sd["0.weight"]
    for same in (w.cpu(), w.to("cpu"), w.float(), w.contiguous()):
        assert same.data_ptr() == w.data_ptr()
    assert w.to("cpu", copy=True).data_ptr() != w.data_ptr()
    buffer = io.BytesIO()
    torch.save(sd, buffer)
    # restoring copies the values in: the snapshot stays intact for a second restore
    model.load_state_dict(kept[1])
    assert all(torch.equal(model.state_dict()[k], at_best[k]) for k in at_best)
    _train_in_place(model)
    assert torch.equal(kept[1]["0.weight"], at_best["0.weight"])
    assert right_choices(TOPIC, "es-snapshot-copies") == {1, 4}


@pytest.mark.verifies("es-cpu-snapshot-alias")
def test_cpu_of_a_cpu_tensor_is_the_tensor_itself():
    """On a GPU, `.cpu()` copies the tensor to host memory (torch's docs for Tensor.cpu: "If this
    object is already in CPU memory, then no copy is performed and the original object is
    returned"); the CPU half of that sentence is what runs here."""
    model = _bn_model()
    best_state = {k: v.cpu() for k, v in model.state_dict().items()}
    at_best = {k: v.clone() for k, v in model.state_dict().items()}
    ptrs = {n: p.data_ptr() for n, p in model.named_parameters()}
    # choice 1: true, and choice 3: false. No copy at all, lazy or not: the same storage
    assert all(best_state[k].data_ptr() == v.data_ptr() for k, v in model.state_dict().items())
    _train_in_place(model)
    # choice 2: false. The optimizer updated the parameters in place: same storage, new values
    assert {n: p.data_ptr() for n, p in model.named_parameters()} == ptrs
    assert torch.equal(best_state["0.weight"], model[0].weight.detach())
    assert not torch.equal(best_state["0.weight"], at_best["0.weight"])
    # choice 0: false. load_state_dict accepts the aliasing dict silently and changes nothing
    last = {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    assert all(torch.equal(model.state_dict()[k], last[k]) for k in last)
    # the fix of the explanation copies on every device
    model = _bn_model()
    fixed = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
    at_best = {k: v.clone() for k, v in model.state_dict().items()}
    _train_in_place(model)
    model.load_state_dict(fixed)
    assert all(torch.equal(model.state_dict()[k], at_best[k]) for k in at_best)
    assert right_choices(TOPIC, "es-cpu-snapshot-alias") == {1}
