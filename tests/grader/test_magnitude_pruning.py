"""magnitude_pruning: the reference passes, the starter fails cleanly, each deliberately buggy solution
fails the checks that describe its bug, and correct solutions written other ways (torch.nn.utils.prune,
a parametrization, zeroing in place before each forward) pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import (
    assert_bug_fails,
    assert_every_check_has_a_bug,
    assert_passes,
    assert_reference_passes,
    assert_starter_fails_cleanly,
    grade_exercise_files,
)
from gradeutil import graded as grade

ROOT = Path(__file__).resolve().parents[2]
EXERCISE = ROOT / "exercises" / "magnitude_pruning"
BUGGY = Path(__file__).resolve().parent / "buggy" / "magnitude_pruning"

CHECK_IDS = [
    "amount-fraction", "global-count", "global-ranking", "biases-kept", "linear-and-conv-only", "returns-sparsity",
    "stays-zero-new-optimizer", "stays-zero-optimizer-state", "survivors-train", "second-call-among-survivors",
    "channels-l2", "channels-stay-zero", "permanent-plain-parameter", "permanent-same-outputs",
]

# bug file -> the checks it must fail; every other check must pass. Where a bug fails more than its
# own check, the extra checks' messages say which check they follow from (tested below).
BUGS = {
    "no_validation": {"amount-fraction"},
    "int_amount_as_count": {"amount-fraction"},  # torch.nn.utils.prune reads an int 1 as one weight
    "truncates_count": {"global-count"},
    # a threshold per layer also rounds per layer (565 zeros for 564), and repeats itself on the
    # second call: both say they follow from global-ranking
    "per_layer_threshold": {"global-ranking", "global-count", "second-call-among-survivors"},
    "ranks_signed": {"global-ranking", "second-call-among-survivors"},
    # biases ranked with the weights take part of the count, on both calls
    "prunes_biases": {"biases-kept", "global-count", "second-call-among-survivors"},
    "prunes_every_weight": {"linear-and-conv-only", "global-count", "second-call-among-survivors"},
    # every module's weight and bias ranked together (norm layers too), as a pruning callback's defaults
    # do: the frozen biases and norm parameters also change how the surviving weights train
    "prunes_biases_and_norms": {"biases-kept", "linear-and-conv-only", "global-count", "survivors-train",
                                "second-call-among-survivors"},
    # the Linear layers are never pruned: too few zeros, a wrong ranking, and a wrong first call
    "ranks_conv_only": {"global-count", "global-ranking", "second-call-among-survivors"},
    "returns_param_names": {"returns-sparsity"},
    # the shared masking code of prune_global and prune_channels: their channels regrow too
    "zero_once": {"stays-zero-new-optimizer", "stays-zero-optimizer-state", "channels-stay-zero"},
    "mask_as_parameter": {"stays-zero-new-optimizer", "channels-stay-zero"},
    "grad_hook_only": {"stays-zero-optimizer-state", "channels-stay-zero"},
    "new_parameter": {"survivors-train"},
    "freezes_negative_weights": {"survivors-train"},
    # torch.nn.utils.prune.global_unstructured ranks module.weight, which only a forward pass refreshes
    "ranks_stale_weight": {"second-call-among-survivors"},
    "rerank_from_scratch": {"second-call-among-survivors"},
    "counts_total_on_second_call": {"second-call-among-survivors"},
    "channels_l1": {"channels-l2"},
    "channels_dim1": {"channels-l2"},
    "permanent_keeps_hook": {"permanent-plain-parameter"},
    "permanent_every_layer": {"permanent-plain-parameter"},
    "permanent_restores_orig": {"permanent-same-outputs"},
    "permanent_stale_weight": {"permanent-same-outputs"},
}
# Correct solutions written another way: torch.nn.utils.prune itself, a parametrization, a forward
# pre-hook that zeroes the Parameter in place, and one that raises TypeError for an amount that is not a
# number (as torch does).
ALTERNATIVES = ["ok_torch_prune", "ok_parametrize", "ok_inplace_prehook", "ok_amount_type_error"]


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_exercise_files(EXERCISE, BUGGY)


def test_reference_passes():
    assert_reference_passes(EXERCISE, CHECK_IDS)


def test_starter_fails_cleanly():
    report = assert_starter_fails_cleanly(EXERCISE, CHECK_IDS)
    for check in report["checks"]:
        assert "NotImplementedError" in check["message"], check


def test_every_check_is_failed_by_some_bug():
    assert_every_check_has_a_bug(BUGGY, BUGS, CHECK_IDS, ALTERNATIVES)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_checks(bug):
    assert_bug_fails(BUGGY / f"{bug}.py", BUGS[bug])


@pytest.mark.parametrize("alt", ALTERNATIVES)
def test_correct_alternatives_pass(alt):
    assert_passes(BUGGY / f"{alt}.py")


def message(bug: str, check_id: str) -> str:
    _, report = grade(BUGGY / f"{bug}.py")
    return next(c["message"] for c in report["checks"] if c["id"] == check_id)


FOLLOWS = 'this follows from the check "'


def test_extra_failures_name_the_check_they_follow_from():
    assert FOLLOWS + "One ranking across all layers" in message("per_layer_threshold", "global-count")
    assert FOLLOWS + "One ranking across all layers" in message("per_layer_threshold", "second-call-among-survivors")
    assert FOLLOWS + "One ranking across all layers" in message("ranks_signed", "second-call-among-survivors")
    assert FOLLOWS + "Biases are never pruned" in message("prunes_biases", "global-count")
    assert FOLLOWS + "prune_global zeroes round(amount * total)" in message("prunes_biases",
                                                                         "second-call-among-survivors")
    assert FOLLOWS + "prune_global zeroes round(amount * total)" in message("prunes_every_weight",
                                                                         "second-call-among-survivors")
    assert FOLLOWS + "Pruned weights stay exactly 0" in message("zero_once", "stays-zero-optimizer-state")
    assert FOLLOWS + "Biases are never pruned" in message("prunes_biases_and_norms", "survivors-train")
    assert FOLLOWS + "One ranking across all layers" in message("ranks_conv_only", "second-call-among-survivors")


def test_counting_mistakes_are_named():
    assert "1316 became zero, expected round(0.7 * 1881) = 1317: 1316.7 was truncated" in message(
        "truncates_count", "global-count")
    assert "573 = round(0.3 * 1910): you counted the 29 BatchNorm/LayerNorm weights" in message(
        "prunes_every_weight", "global-count")
    assert "that is round(0.3 * n) in each layer on its own ([14, 54, 461, 36])" in message(
        "per_layer_threshold", "global-count")
    assert "prune_global(model, 2): expected ValueError" in message("int_amount_as_count", "amount-fraction")
    assert "it zeroed 2 weights: an int is never a count here" in message("int_amount_as_count", "amount-fraction")
    text = message("ranks_conv_only", "global-count")
    assert "68 became zero, expected round(0.3 * 1881) = 564: every nn.Linear (head.1, head.4) kept all its " \
           "weights" in text
    assert "68 = round(0.3 * 225) counts the nn.Conv2d weights alone" in text


def test_ranking_mistakes_are_named():
    text = message("per_layer_threshold", "global-ranking")
    assert "is [49%, 50%, 50%, 50%], one global ranking gives [20%, 44%, 53%, 32%]" in text
    assert "a threshold per layer" in text
    assert "you ranked by signed value" in message("ranks_signed", "global-ranking")
    assert "smallest L1 norm" in message("channels_l1", "channels-l2")
    assert "you zeroed input channels (dim=1)" in message("channels_dim1", "channels-l2")
    assert "every nn.Linear (head.1, head.4) kept all its weights" in message("ranks_conv_only", "global-ranking")


def test_regrowth_messages_say_why_and_name_both_optimizers():
    text = message("zero_once", "stays-zero-new-optimizer")
    assert "grew back" in text and "zeroing it once is not enough" in text
    assert "SGD(lr=0.1, momentum=0.9) made after the pruning" in text and "; with AdamW(lr=0.01" in text
    text = message("mask_as_parameter", "stays-zero-new-optimizer")
    assert "trains your mask" in text and "register it as a buffer" in text and "zeroing it once" not in text
    # one upstream cause at most, the first call's ranking before its count
    assert message("per_layer_threshold", "second-call-among-survivors").count(FOLLOWS) == 1
    text = message("grad_hook_only", "stays-zero-optimizer-state")
    assert "made before the pruning, with 2 steps behind it" in text and "masking the gradient is not enough" in text
    assert FOLLOWS not in text  # with a new optimizer the gradient hook is enough: no upstream cause
    assert "have not moved at all" in message("new_parameter", "survivors-train")
    text = message("freezes_negative_weights", "survivors-train")
    assert "made after the pruning: after 4 optimizer steps, 482 surviving weights, all negative, kept their " \
           "values" in text
    assert "a mask built from w < eps without abs freezes every negative weight" in text.lower()
    assert FOLLOWS not in text


def test_second_call_messages_show_the_counts():
    text = message("rerank_from_scratch", "second-call-among-survivors")
    assert "should zero round(0.5 * 1317) = 658 more of the 1317 alive, 1222 in all (65%); you have 940" in text
    assert "ranked from scratch" in text
    assert "a fraction of the whole model" in message("counts_total_on_second_call", "second-call-among-survivors")
    text = message("ranks_stale_weight", "second-call-among-survivors")
    assert "then prune_global(model, 0.5) with no forward pass after the last step: it zeroed 41 weights that are " \
           "not among the 658 of smallest current |w| of the 1317 alive" in text
    assert "you ranked the weights of the last forward pass, from before the last optimizer step" in text
    assert "importance_scores" in text


def test_make_permanent_messages():
    assert "still has 1 forward hook" in message("permanent_keeps_hook", "permanent-plain-parameter")
    assert "model.out never pruned" in message("permanent_every_layer", "permanent-plain-parameter")
    assert "not weight_orig alone" in message("permanent_restores_orig", "permanent-same-outputs")
    assert "is stale" in message("permanent_stale_weight", "permanent-same-outputs")


def test_the_model_has_the_weight_count_the_messages_use():
    import sys

    sys.path.insert(0, str(EXERCISE))
    try:
        import nets
    finally:
        sys.path.remove(str(EXERCISE))
    sizes = [m.weight.numel() for _, m in nets.layers(nets.Net())]
    assert sizes == [45, 180, 1536, 120] and sum(sizes) == 1881
