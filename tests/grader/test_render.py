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
