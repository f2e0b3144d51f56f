"""The printed report's first line says where the grade ran, and only what is known."""

from __future__ import annotations

from rich.console import Console

from quizapp.grading.render import print_report
from quizapp.grading.result import GradeReport


def header(report: GradeReport) -> str:
    console = Console(record=True, width=200)
    print_report(report, console=console)
    return console.export_text().splitlines()[0]


def test_the_header_names_the_device_and_torch_of_the_run():
    report = GradeReport("lora", "lora.py", "pass", None, "cuda", "2.13.0", 1.0)
    assert header(report) == "lora  (lora.py, device cuda, torch 2.13.0)"


def test_a_file_that_could_not_be_run_shows_no_placeholder_for_them():
    report = GradeReport("lora", "lora.py", "error", "`lora` has the wrong signature", None, None, 0.1)
    assert header(report) == "lora  (lora.py)"


def report_text(report: GradeReport) -> str:
    console = Console(record=True, width=200)
    print_report(report, console=console)
    return console.export_text()


def test_the_same_error_under_other_inputs_is_told_once_and_unreached_checks_say_not_run():
    from quizapp.grading.result import CheckResult

    boom = "NotImplementedError: train is not written yet\n  line 3, in train: raise NotImplementedError"
    checks = [CheckResult("a", "First", "error", f"with dtype=float16: {boom}"),
              CheckResult("b", "Second", "error", f"with dtype=bfloat16: {boom}"),
              CheckResult("c", "Third", "fail", "expected 3, got 4"),
              CheckResult("d", "Fourth", "fail", "expected 3, got 4"),
              CheckResult("e", "Fifth", "error", "timed out after 5 s"),
              CheckResult("f", "Sixth", "error", "did not run: an earlier check ended the run")]
    text = report_text(GradeReport("x", "x.py", "error", "timed out after 5 s", "cpu", "2", 5.0, checks))
    assert text.count("NotImplementedError: train is not written yet") == 1
    assert 'same error as "First"' in text and 'same failure as "Third"' in text
    assert "timed out after 5 s" in text and 'same error as "Sixth"' not in text
    sixth = next(line for line in text.splitlines() if "Sixth" in line)
    assert "not run" in sixth and "ERROR" not in sixth


def test_a_file_that_ran_no_check_gets_no_count_of_zero():
    report = GradeReport("lora", "lora.py", "error", "the solution has a syntax error at line 1", None, None, 0.1)
    text = report_text(report)
    assert "0/0" not in text and "no check could run" in text


def test_a_nan_point_is_left_out_where_it_is(monkeypatch):
    """The points after a NaN keep their x: a gap, not a curve shifted one step left."""
    import plotext

    from quizapp.grading.render import plot_text

    seen = {}
    real = plotext.plot

    def plot(xs, ys, **kwargs):
        seen[kwargs["label"]] = list(xs)
        return real(xs, ys, **kwargs)

    monkeypatch.setattr(plotext, "plot", plot)
    plot_text({"title": "t", "x": "step", "series": {"yours": [1.0, float("nan"), 3.0, float("inf"), 5.0]}})
    assert seen["yours"] == [0, 2, 4]
    plot_text({"title": "t", "series": {"yours": [1.0, float("nan"), 3.0]}})
    assert seen["yours"] == [1, 3]  # epochs count from 1


def test_a_series_with_nothing_to_draw_is_named_and_the_axes_are_labelled():
    """plotext draws no point and no legend entry for a series without a finite value: the x label names it,
    so a plot of three series never reads as one of two."""
    from quizapp.grading.render import plot_text

    curves = {"title": "t", "x": "step", "y": "val loss",
              "series": {"val loss": [1.0, 0.8, 0.7], "reference": [1.0, 0.8, 0.8], "yours": [None, None, None]}}
    drawn = plot_text(curves, width=70)
    assert "step   (yours: no value to plot)" in drawn and "val loss" in drawn.splitlines()[-1]
    assert "no value to plot" not in plot_text({**curves, "series": {"yours": [1.0, float("nan")]}}, width=70)


def test_a_wrapped_review_title_stays_under_its_own_text():
    from io import StringIO

    from quizapp.grading.render import print_review

    out = StringIO()
    print_review([("q-long", "A decoder has 32 layers; in each layer q_proj and v_proj are both nn.Linear(4096, 4096) "
                   "layers wrapped with LoRA at rank 8")], [], Console(file=out, width=60, color_system=None))
    lines = [line.rstrip() for line in out.getvalue().splitlines()[1:] if line.strip()]
    assert len(lines) > 1 and lines[0].lstrip().startswith("• ")
    assert all(line.startswith("    ") for line in lines[1:]), lines  # under the text, never at column 0
