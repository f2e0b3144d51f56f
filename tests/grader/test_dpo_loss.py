"""dpo_loss: the statement's worked example is what the reference computes, the low-precision seeds still
tell an upcast sum from one taken in the half type, and the mistakes the checks name are told apart from
each other (its grades and buggy solutions: test_mutants.py)."""

from __future__ import annotations

import importlib.util
import itertools

import pytest
import torch
import yaml
from gradeutil import EXERCISES

from quizapp.checking.harness import close_elements, is_close

FOLDER = EXERCISES / "dpo_loss"


@pytest.fixture(scope="module")
def checks():
    spec = importlib.util.spec_from_file_location("dpo_loss_checks_under_test", FOLDER / "checks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def reference():
    spec = importlib.util.spec_from_file_location("dpo_loss_reference_under_test", FOLDER / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_worked_example_is_the_reference(reference):
    statement = yaml.safe_load((FOLDER / "exercise.yaml").read_text(encoding="utf-8"))["statement"]
    logits = torch.tensor([[[2.0, 0.0, -1.0], [0.5, 1.5, 0.0], [1.0, -1.0, 2.0], [0.0, 0.0, 0.0]]],
                          dtype=torch.float64)
    ids, mask = torch.tensor([[2, 1, 2, 0]]), torch.tensor([[False, True, True, False]])
    total = float(reference.sequence_logprobs(logits, ids, mask))
    lp = torch.log_softmax(logits[0], dim=-1)
    unshifted = float(lp[1, 1] + lp[2, 2])
    everything = float(lp[0, 1] + lp[1, 2] + lp[2, 0])
    figures = [total, unshifted, total / 2, everything]
    policy = (torch.tensor([-10.0], dtype=torch.float64), torch.tensor([-14.0], dtype=torch.float64))
    ref = (torch.tensor([-11.0], dtype=torch.float64), torch.tensor([-13.0], dtype=torch.float64))
    loss, chosen, rejected = reference.dpo_loss(*policy, *ref, beta=0.1)
    smoothed = float(reference.dpo_loss(*policy, *ref, beta=0.1, label_smoothing=0.1)[0])
    swapped = float(reference.dpo_loss(*ref, *policy, beta=0.1, label_smoothing=0.1)[0])
    up, down = torch.nn.functional.logsigmoid(torch.tensor(0.2, dtype=torch.float64)), \
        torch.nn.functional.logsigmoid(torch.tensor(-0.2, dtype=torch.float64))
    figures += [float(loss), smoothed, float(-0.9 * up + 0.1 * down), float((-0.9 * up + 0.1 * down) / 0.8), swapped]
    assert (float(chosen), float(rejected)) == pytest.approx((0.1, -0.1))
    for value in figures:
        assert f"{value:.4f}".replace("-", "−") in statement, value


def test_the_low_precision_seeds_tell_a_half_log_softmax_apart(checks, reference):
    tk = checks.tk
    for dtype, seed in checks.LOW_SEEDS.items():
        batch = tk.make_batch("cpu", dtype=dtype, mask="bool", seed=seed, scale=3.0, rows=tk.LONG_ROWS,
                              length=tk.LONG_LENGTH, vocab=tk.LONG_VOCAB)
        exact = tk.truth(batch, reference)
        upcast = reference.sequence_logprobs(batch.logits, batch.ids, batch.mask)
        assert is_close(upcast, exact, checks.LOW_TOL)
        half = tk.low_precision_variant(batch)
        assert not close_elements(half, exact, checks.LOW_TOL).any(), dtype


def test_the_named_mistakes_differ_from_each_other_and_from_the_right_sums(checks, reference):
    tk = checks.tk
    for dtype, mask, seed in checks.SUM_CASES:
        batch = tk.make_batch("cpu", dtype=dtype, mask=mask, seed=seed)
        right = tk.truth(batch, reference)
        values = [(what, value) for what, _, value in tk.variants(batch)]
        for what, value in values:
            known = value.isfinite()
            assert not is_close(value[known], right[known], tk.TOLS[dtype]), what
        for (a, x), (b, y) in itertools.combinations(values, 2):
            known = x.isfinite() & y.isfinite()
            assert not is_close(x[known], y[known], tk.TOLS[dtype]), (a, b)


def test_the_named_wrong_losses_differ_from_each_other(checks):
    pairs = checks.pairs
    for i, case in enumerate(pairs.GRID):
        beta, ls = pairs.DEFAULTS if case is None else case
        logps = pairs.make_logps(50 + i)
        right = float(pairs.per_pair(pairs.margin(logps), beta, ls).mean())
        values = pairs.loss_variants(logps, beta, ls)
        assert all(not is_close(v, right, pairs.TOLS[torch.float32]) for _, v in values), case
        for (a, x), (b, y) in itertools.combinations(values, 2):
            assert not is_close(x, y, pairs.TOLS[torch.float32]), (case, a, b)
