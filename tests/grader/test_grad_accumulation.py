"""grad_accumulation: a loop that hides its concatenated groups from the recorders is still seen (its
grades and buggy solutions: test_mutants.py)."""

from __future__ import annotations

from pathlib import Path

from gradeutil import graded

UNSEEN = Path(__file__).parent / "hostile" / "accumulation_unseen.py"


def up_front(items) -> list[tuple[str, tuple]]:
    return [("cold", (str(UNSEEN),))]


def test_a_concatenated_group_behind_throw_away_micro_batches_is_seen():
    """One big batch per group through model.forward(x) and torch.autograd.backward, with a throw-away
    forward and zero backward per micro-batch for the recorders: forwards are recorded at the first
    layer (model.forward still calls it) and backward at torch.autograd.backward (Tensor.backward calls it)."""
    code, report = graded(UNSEEN)
    checks = {c["id"]: c for c in report["checks"]}
    assert code == 1 and checks["one-micro-batch-at-a-time"]["status"] == "fail"
    assert "saw [8, 8, 8, 8, 32, 8, 2, 10]" in checks["one-micro-batch-at-a-time"]["message"], checks
