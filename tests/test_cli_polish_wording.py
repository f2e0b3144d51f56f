"""Wording: whole-number epochs on the loss plot, and "1 time" / "3 times" in check messages."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from quizapp.grading.render import integer_ticks, plot_text

ROOT = Path(__file__).resolve().parents[1]


def x_tick_labels(plot: str) -> list[str]:
    lines = re.sub(r"\x1b\[[0-9;]*m", "", plot).splitlines()
    axis = next(i for i, line in enumerate(lines) if "└" in line)
    return lines[axis + 1].split()


def test_three_epochs_are_labelled_1_2_3():
    plot = plot_text({"title": "loss", "series": {"yours": [1.0, 0.8, 0.7], "reference": [1.0, 0.79, 0.69]}})
    assert x_tick_labels(plot) == ["1", "2", "3"]


def test_steps_count_from_0_and_a_long_run_gets_round_ticks():
    plot = plot_text({"title": "scale", "x": "step", "series": {"yours": [float(i % 7) for i in range(40)]}})
    assert x_tick_labels(plot) == ["0", "5", "10", "15", "20", "25", "30", "35"]


def test_a_single_epoch_plots():
    assert x_tick_labels(plot_text({"series": {"yours": [0.5]}})) == ["1"]


def test_integer_ticks():
    assert integer_ticks(1, 3) == [1, 2, 3]
    assert integer_ticks(0, 7) == [0, 1, 2, 3, 4, 5, 6, 7]
    assert integer_ticks(0, 8) == [0, 2, 4, 6, 8]
    assert integer_ticks(1, 20) == [1, 5, 10, 15, 20]
    assert integer_ticks(0, 1000) == [0, 200, 400, 600, 800, 1000]
    assert integer_ticks(4, 4) == [4]


def test_a_check_message_says_1_time_not_time_s():
    buggy = ROOT / "tests" / "grader" / "buggy" / "loss_scaler" / "steps_on_inf.py"
    out = subprocess.run([sys.executable, "-m", "quizapp", "grade", str(buggy), "--json", "--device", "cpu"],
                         capture_output=True, text=True, timeout=600)
    report = json.loads(out.stdout)
    message = next(c["message"] for c in report["checks"] if c["id"] == "skip-on-overflow")
    assert "optimizer.step() was called 1 time;" in message
    assert "time(s)" not in out.stdout


# -- quizapp config new-per-day: one plain message for every reply that is not a whole number ----

def config_new_per_day(*args: str):
    from click.testing import CliRunner

    from quizapp.cli import cli

    return CliRunner().invoke(cli, ["config", "new-per-day", *args], catch_exceptions=False)


def test_new_per_day_says_what_it_takes_for_text_a_negative_or_a_fraction():
    for reply in ("abc", "-3", "2.5", "", "--lots"):
        result = config_new_per_day(reply)
        assert result.exit_code == 2, reply
        assert result.stderr == f"quizapp: new-per-day takes a whole number from 0 up, e.g. 10 (not '{reply}').\n"
        assert "No such option" not in result.output and "integer range" not in result.output
    assert config_new_per_day("99999").stderr == "quizapp: new-per-day is at most 10,000 (not 99999).\n"
    assert config_new_per_day("9" * 5000).exit_code == 2  # too long for int(): still the plain message
    assert config_new_per_day("--help").output.startswith("Usage:")


def test_new_per_day_takes_0_and_a_number_with_spaces_or_a_sign():
    assert config_new_per_day("0").exit_code == 0
    assert "new-per-day = 0" in config_new_per_day().output
    assert config_new_per_day(" +12 ").exit_code == 0
    assert "new-per-day = 12" in config_new_per_day().output
