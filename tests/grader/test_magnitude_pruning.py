"""magnitude_pruning: a failure names one upstream cause at most, and the model has the weight count its
messages use (its grades and buggy solutions: test_mutants.py)."""

from __future__ import annotations

import sys

from gradeutil import BUGGY, EXERCISES, message

EXERCISE = EXERCISES / "magnitude_pruning"
PER_LAYER = BUGGY / "magnitude_pruning" / "per_layer_threshold.py"
FOLLOWS = 'this follows from the check "'


def up_front(items) -> list[tuple[str, tuple]]:
    return [("warm", (str(PER_LAYER),))]


def test_a_failure_names_one_upstream_cause_at_most():
    # the first call's ranking, before its count
    assert message(PER_LAYER, "second-call-among-survivors").count(FOLLOWS) == 1


def test_the_model_has_the_weight_count_the_messages_use():
    sys.path.insert(0, str(EXERCISE))
    try:
        import nets
    finally:
        sys.path.remove(str(EXERCISE))
    sizes = [m.weight.numel() for _, m in nets.layers(nets.Net())]
    assert sizes == [45, 180, 1536, 120] and sum(sizes) == 1881
