"""The mixup_cutmix exercise: the reference passes, the starter fails cleanly with the learner's line and the
inputs, each buggy solution fails the check that names its bug (and passes the unrelated ones), two correct
solutions written another way pass, and the messages name the mistake, not a neighbouring one."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import (
    assert_bug_fails,
    assert_every_check_has_a_bug,
    assert_passes,
    assert_reference_passes,
    assert_starter_fails_cleanly,
    grade,
    grade_exercise_files,
)

EXERCISE = "mixup_cutmix"
ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "exercises" / EXERCISE
BUGGY = Path(__file__).resolve().parent / "buggy" / EXERCISE
CHECK_IDS = ["mixup-pixels", "mixup-targets", "labels-follow-pixels", "cutmix-box", "cutmix-label-weight",
             "targets-shape-dtype", "x-y-unchanged", "soft-ce-matches-torch", "soft-ce-large-logits", "validation"]

# bug file -> the checks it must fail; every other check must pass (a loss that is wrong for ordinary logits
# is not failed again for logits of 1e4: that check only grades what large logits change).
BUGS = {
    # Labels paired otherwise than the pixels (timm's mixup_target flips y; a second randperm).
    "labels_flipped": {"labels-follow-pixels"},
    "labels_second_randperm": {"labels-follow-pixels"},
    # Pixels and labels both paired with argsort(perm): the labels follow the pixels, the pixels are wrong in
    # both functions.
    "scatter_partner": {"mixup-pixels", "cutmix-box"},
    "pixels_weights_swapped": {"mixup-pixels"},
    "targets_weights_swapped": {"mixup-targets"},
    "targets_assign_not_add": {"mixup-targets"},
    # fastai's MixUp: lam folded to max(lam, 1 - lam), right for every lam of 0.5 or more.
    "mixup_lam_folded": {"mixup-pixels", "mixup-targets"},
    # timm's default label_smoothing=0.1 in the targets of both; CutMix's clipped weight is right under it.
    "targets_label_smoothing": {"mixup-targets", "cutmix-label-weight"},
    "cutmix_drawn_lam": {"cutmix-label-weight"},
    "area_before_clip": {"cutmix-label-weight"},
    # Not clipping shows twice, each its own symptom: a negative slice start pastes nothing, and the weight
    # counts the pixels outside the image.
    "box_not_clipped": {"cutmix-box", "cutmix-label-weight"},
    "box_center_swapped": {"cutmix-box"},
    "box_side_no_sqrt": {"cutmix-box"},
    "loop_reads_mixed": {"cutmix-box"},
    "cutmix_in_place": {"x-y-unchanged"},
    "mixup_in_place": {"x-y-unchanged"},
    "targets_float32": {"targets-shape-dtype"},
    "lam_float32_tensor": {"targets-shape-dtype"},
    "one_hot_no_num_classes": {"targets-shape-dtype"},
    "soft_ce_sum_rows": {"soft-ce-matches-torch"},
    "soft_ce_mean_all": {"soft-ce-matches-torch"},
    "hard_label_loss": {"soft-ce-matches-torch"},
    "soft_ce_log_of_softmax": {"soft-ce-large-logits"},
    "soft_ce_eps": {"soft-ce-large-logits"},
    "nan_lam_passes": {"validation"},
    "perm_length_only": {"validation"},
}
# ok_strict_arguments refuses any lam but a Python float and any center but two ints inside the image: the
# contract asks nothing else, so no check may pass anything else.
ALTERNATIVES = ["ok_torchvision_style", "ok_mask_and_logsumexp", "ok_strict_arguments"]


@pytest.fixture(scope="module", autouse=True)
def graded_in_parallel():
    grade_exercise_files(FOLDER, BUGGY)


def test_reference_passes():
    assert_reference_passes(FOLDER, CHECK_IDS)


def plot_of(path: Path) -> dict:
    """The label-weight plot of a warm grade (plots are not part of --json)."""
    from warmutil import grader

    from quizapp.grading.runner import grade as run_grade

    report = run_grade(path, FOLDER, exercise_id=EXERCISE, warm=grader())
    return next(c for c in report.checks if c.id == "cutmix-label-weight").data["curves"]


def curves_of(path: Path) -> dict:
    return plot_of(path)["series"]


def test_the_plot_shows_the_clipped_weight():
    series = curves_of(FOLDER / "reference.py")
    assert series["yours"] == series["reference"] and len(series["yours"]) == 31
    assert series["drawn lam"] == [0.75] * 31
    # cx = 1 and 31: the 16 x 16 box is clipped to 16 x 9; cx = 8 to 24: it lies inside the 32 x 32 image.
    assert series["reference"][0] == series["reference"][-1] == 1 - 16 * 9 / 1024
    assert series["reference"][7:24] == [0.75] * 17
    drawn = curves_of(BUGGY / "cutmix_drawn_lam.py")
    assert drawn["yours"] == [0.75] * 31 and drawn["reference"] == series["reference"]


def test_the_plot_has_a_title_that_fits_and_names_its_axes():
    from quizapp.grading.render import plot_text

    curves = plot_of(FOLDER / "reference.py")
    drawn = plot_text(curves, width=70)  # the narrowest the report draws it; plotext drops a title that does not fit
    assert curves["title"] == "cutmix: y[i]'s weight as the 16x16 box moves (32x32, lam 0.75)"
    assert curves["title"] in drawn
    assert curves["y"] == "weight of y[i]" and curves["y"] in drawn
    assert "box centre cx (cy 16)" in drawn


def test_starter_fails_with_the_learners_line():
    report = assert_starter_fails_cleanly(FOLDER, CHECK_IDS)
    first = report["checks"][0]["message"]
    assert first.startswith("with mixup(x (6, 3, 4, 4), lam=0.7, perm=[2, 0, 4, 5, 1, 3], num_classes=10)"), first
    assert "mixup is not written yet" in first and "in mixup: raise NotImplementedError" in first
    messages = {c["id"]: c["message"] for c in report["checks"]}
    assert "cutmix is not written yet" in messages["cutmix-box"]
    assert "soft_target_cross_entropy is not written yet" in messages["soft-ce-matches-torch"]


def test_every_check_is_failed_by_some_bug():
    assert_every_check_has_a_bug(BUGGY, BUGS, CHECK_IDS, ALTERNATIVES)


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_buggy_solution_fails_its_checks(bug):
    assert_bug_fails(BUGGY / f"{bug}.py", BUGS[bug])


@pytest.mark.parametrize("alt", ALTERNATIVES)
def test_correct_alternatives_pass(alt):
    assert_passes(BUGGY / f"{alt}.py")


@pytest.mark.parametrize("bug, check, words", [
    ("labels_flipped", "labels-follow-pixels",
     ["row 0's pixels are mixed with sample perm[0] = 2", "the label of sample 5", ".flip(0)", "y[perm]"]),
    ("labels_second_randperm", "labels-follow-pixels", ["a second torch.randperm", "same perm as its pixels"]),
    ("scatter_partner", "mixup-pixels", ["Row 0 is mixed with sample 1, not with perm[0] = 2", "inverse permutation"]),
    ("scatter_partner", "cutmix-box", ["holds pixels of sample 3, not of perm[0] = 1", "inverse permutation"]),
    ("pixels_weights_swapped", "mixup-pixels", ["expected -0.294328, got 0.814355", "lam weighs x[perm]"]),
    ("targets_weights_swapped", "mixup-targets", ["should be lam = 0.7 on its own label 1", "class 1: 0.3",
                                                  "the weights are swapped"]),
    ("targets_assign_not_add", "mixup-targets", ["should be 1.0 on class 0", "got {class 0: 0.4}", "overwrote",
                                                 "scatter_add_"]),
    ("mixup_lam_folded", "mixup-pixels", ["lam=0.25", "lam was folded to max(lam, 1 - lam) = 0.75: the contract uses "
                                          "the drawn lam as is", "fastai"]),
    ("mixup_lam_folded", "mixup-targets", ["lam=0.25", "got {class 2: 0.25, class 3: 0.75}",
                                           "lam was folded to max(lam, 1 - lam) = 0.75: the contract uses the drawn "
                                           "lam as is"]),
    ("targets_label_smoothing", "mixup-targets",
     ["got {class 1: 0.64, class 9: 0.28} and 0.01 on each other class", "the targets carry label smoothing of 0.1",
      "smoothing / num_classes = 0.1 / 10 = 0.01", "timm's Mixup", "label_smoothing=0.1",
      "without it your targets are right"]),
    ("targets_label_smoothing", "cutmix-label-weight",
     ["should be 0.859375 on its label", "0.01 on each other class", "label smoothing of 0.1",
      "the clipped box's share, as they should be", "the check fails for the smoothing alone",
      'this follows from the check "mixup: each target row is lam on its own label plus 1 - lam on its partner\'s"']),
    ("cutmix_drawn_lam", "cutmix-label-weight",
     ["[0:12, 0:12] after clipping, 144 of 1024 pixels", "= 0.859375", "0.75 on its own label",
      "the drawn lam = 0.75", "correct_lam"]),
    ("area_before_clip", "cutmix-label-weight", ["0.859375", "1 - h * w / (H * W) = 1 - 16 * 16 / 1024",
                                                 "from the clipped y0, y1, x0, x1"]),
    ("box_not_clipped", "cutmix-box", ["should take the box [0:3, 0:3] (9 pixels)", "yours takes no pixel",
                                       "not clipped", "a negative slice start counts from the end",
                                       "\n  ---.....\n  ---.....\n  ---.....\n  ........"]),
    ("box_not_clipped", "cutmix-label-weight", ["pasted 0 pixels", "before clipping: clip the ends first"]),
    ("box_center_swapped", "cutmix-box", ["[7:12, 0:8] (40 pixels)", "60 pixels in [0:6, 5:15]",
                                          "center is (cy, cx), here (10, 3), row first"]),
    ("box_side_no_sqrt", "cutmix-box", ["4 pixels in [0:2, 0:2]", "H * sqrt(1 - lam)"]),
    ("loop_reads_mixed", "cutmix-box", ["sample 3", "holds pixels of sample 1, not of perm[3] = 0", "[1, 2, 3, 1]",
                                        "pasted earlier in the same loop", "unmodified x"]),
    ("cutmix_in_place", "x-y-unchanged", ["changed 192 of 768 values of x", "rows 0:4, columns 0:4",
                                          "returned x itself", "timm's Mixup", "x.clone()"]),
    ("mixup_in_place", "x-y-unchanged", ["changed 768 of 768 values of x", "x.mul_(lam)"]),
    ("targets_float32", "targets-shape-dtype", ["bfloat16", "targets is float32", "timm's one_hot", "dtype=x.dtype"]),
    ("lam_float32_tensor", "targets-shape-dtype", ["float64", "1.19e-08", "float32 rounding", "torch.tensor(lam)"]),
    ("one_hot_no_num_classes", "targets-shape-dtype", ["shape (6, 7), expected (6, 10)", "num_classes"]),
    ("soft_ce_sum_rows", "soft-ce-matches-torch", ["expected loss 4.74709", "got 37.9767", "summed, not averaged"]),
    ("soft_ce_mean_all", "soft-ce-matches-torch", ["got 0.474709", "N x C = 80"]),
    ("hard_label_loss", "soft-ce-matches-torch", ["targets.argmax(-1)", "soft targets themselves"]),
    ("soft_ce_log_of_softmax", "soft-ce-large-logits", ["the loss is nan", "12448.4", "0 times -inf is NaN",
                                                        "F.log_softmax"]),
    ("soft_ce_eps", "soft-ce-large-logits", ["got 26.2495", "right for ordinary logits", "an epsilon"]),
    ("nan_lam_passes", "validation", ["lam=nan", "`lam < 0 or lam > 1`", "not 0 <= lam <= 1"]),
    ("perm_length_only", "validation", ["perm=[0, 0, 2, 3], which repeats 0 and lacks 1", "len(perm) alone"]),
])
def test_messages_name_the_mistake(bug, check, words):
    message = grade(BUGGY / f"{bug}.py").check(check)["message"]
    assert all(w in message for w in words), message


@pytest.mark.parametrize("bug, check, wrong_cause", [
    ("area_before_clip", "cutmix-label-weight", "drawn lam"),  # h * w from before clipping, not lam itself
    ("cutmix_drawn_lam", "cutmix-label-weight", "h * w"),
    ("box_not_clipped", "cutmix-label-weight", "drawn lam"),
    ("box_center_swapped", "cutmix-box", "not clipped"),  # a transposed box is clipped all right
    ("labels_second_randperm", "labels-follow-pixels", "flip"),
    ("loop_reads_mixed", "cutmix-box", "inverse permutation"),
    # A fold looks like swapped weights at lam 0.25, but at 0.75 it is right: not swapped.
    ("mixup_lam_folded", "mixup-pixels", "lam weighs x[perm]"),
    ("mixup_lam_folded", "mixup-targets", "the weights are swapped"),
    ("pixels_weights_swapped", "mixup-pixels", "folded"),
    ("targets_weights_swapped", "mixup-targets", "folded"),
    # The smoothed targets' weights are the clipped share: nothing says the drawn lam or the area before clipping.
    ("targets_label_smoothing", "cutmix-label-weight", "drawn lam"),
    ("targets_label_smoothing", "cutmix-label-weight", "h * w"),
])
def test_messages_do_not_blame_another_cause(bug, check, wrong_cause):
    message = grade(BUGGY / f"{bug}.py").check(check)["message"]
    assert wrong_cause not in message, message
