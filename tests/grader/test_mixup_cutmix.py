"""mixup_cutmix: the plot of CutMix's label weight as the box moves (its grades and buggy solutions:
test_mutants.py)."""

from __future__ import annotations

from gradeutil import BUGGY, EXERCISES
from warmutil import warm_report

REFERENCE = EXERCISES / "mixup_cutmix" / "reference.py"
DRAWN_LAM = BUGGY / "mixup_cutmix" / "cutmix_drawn_lam.py"


def up_front(items) -> list[tuple[str, tuple]]:
    return [("warm", (str(REFERENCE),)), ("warm", (str(DRAWN_LAM),))]


def plot_of(path) -> dict:
    """The label-weight plot of a warm grade (plots are not part of --json)."""
    return next(c for c in warm_report(path).checks if c.id == "cutmix-label-weight").data["curves"]


def test_the_plot_shows_the_clipped_weight():
    series = plot_of(REFERENCE)["series"]
    assert series["yours"] == series["reference"] and len(series["yours"]) == 31
    assert series["drawn lam"] == [0.75] * 31
    # cx = 1 and 31: the 16 x 16 box is clipped to 16 x 9; cx = 8 to 24: it lies inside the 32 x 32 image.
    assert series["reference"][0] == series["reference"][-1] == 1 - 16 * 9 / 1024
    assert series["reference"][7:24] == [0.75] * 17
    drawn = plot_of(DRAWN_LAM)["series"]
    assert drawn["yours"] == [0.75] * 31 and drawn["reference"] == series["reference"]


def test_the_plot_has_a_title_that_fits_and_names_its_axes():
    from quizapp.grading.render import plot_text

    curves = plot_of(REFERENCE)
    drawn = plot_text(curves, width=70)  # the narrowest the report draws it; plotext drops a title that does not fit
    assert curves["title"] == "cutmix: y[i]'s weight as the 16x16 box moves (32x32, lam 0.75)"
    assert curves["title"] in drawn
    assert curves["y"] == "weight of y[i]" and curves["y"] in drawn
    assert "box centre cx (cy 16)" in drawn
