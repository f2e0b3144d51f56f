"""Code in questions at 80 columns: `bank check` warns about code lines wider than 76 columns, at
their own file:line, without failing a valid bank; `quizapp review` shows a longer line whole, each
continuation led by a mark so that it never reads as a new line of code."""

from __future__ import annotations

import io

from click.testing import CliRunner
from rich.console import Console

from quizapp.bank import load_bank
from quizapp.bank.codewidth import CODE_WIDTH, WideLine, wide_code_lines
from quizapp.bank.codewrap import CONTINUATION
from quizapp.cli import cli
from quizapp.commands.richtext import QuestionMarkdown

LONG = "log_grad_norms(model, scaler, optimizer)   # calls scaler.unscale_(optimizer) again"  # 83

PACK = f"""
topic: wide
title: Wide code
questions:
  - id: wide-prompt
    type: single
    difficulty: 1
    prompt: |
      A logging helper:
      ```python
      scaler.unscale_(optimizer)
      {LONG}
      ```
      What happens?
    choices: [a, b]
    answer: 0
    explanation: |
      - In a list item:
        ```python
        {"x" * 77}
        ```
"""


def test_wide_code_lines_counts_code_only_and_from_the_fence_indent():
    text = "prose " * 30 + "\n```python\nshort\n" + "y" * 77 + "\n```\n  ```\n  " + "z" * 76 + "\n  ```\n~~~\n\tq" + "w" * 72
    assert wide_code_lines(text) == [WideLine(3, 77), WideLine(9, 77)]  # the tab counts 4 columns
    assert wide_code_lines("```\n" + "a" * 90) == [WideLine(1, 90)]  # a block left open runs to the end
    assert wide_code_lines("x" * 100) == []
    assert CODE_WIDTH == 76


def test_bank_check_warns_at_the_code_line_and_still_passes(write_pack):
    path = write_pack(PACK, "wide.yaml")
    result = CliRunner().invoke(cli, ["bank", "check", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines == [
        f"{path}:11: warning: code line is 83 columns wide; up to 76 fit an 80-column terminal unwrapped",
        f"{path}:19: warning: code line is 77 columns wide; up to 76 fit an 80-column terminal unwrapped",
    ]
    assert path.read_text().splitlines()[10].strip() == LONG
    assert result.stderr.startswith("ok: 1 file, 1 topic, 1 question; 2 warnings")
    assert "wide-prompt" in load_bank([path]).questions  # a warning keeps nothing out


def test_a_warning_does_not_hide_or_change_an_error(write_pack):
    path = write_pack(PACK.replace("answer: 0", "answer: 7"), "wide.yaml")
    result = CliRunner().invoke(cli, ["bank", "check", str(path)], catch_exceptions=False)
    assert result.exit_code == 1
    reasons = [line.split(": ", 1)[1] for line in result.stdout.splitlines()]
    assert len(reasons) == 3 and sum(r.startswith("warning:") for r in reasons) == 2
    assert "1 error in 1 of 1 file; 2 warnings" in result.stderr


def test_the_shipped_bank_keeps_its_code_within_76_columns():
    bank = load_bank()
    assert not bank.errors
    assert [str(w) for w in bank.warnings] == []


def rendered(markdown: str, width: int = 80) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None).print(QuestionMarkdown(markdown))
    return [line.rstrip() for line in out.getvalue().splitlines()]


def test_a_long_code_line_continues_under_a_mark_at_its_indent():
    lines = rendered(f"```python\nif True:\n    {LONG}\nx = 1\n```", width=60)
    code = [line for line in lines if line.strip()]
    assert all(len(line) <= 60 for line in lines)
    first, rest = code[1], code[2:-1]
    assert first.startswith(" " * 5 + "log_grad_norms(") and rest
    assert all(line.startswith(" " * 5 + CONTINUATION) for line in rest)  # pad, the line's indent, the mark
    pieces = [first.strip()] + [line.strip().removeprefix(CONTINUATION) for line in rest]
    assert " ".join(pieces).split() == LONG.split()  # nothing cut off, nothing added
    assert code[-1] == " x = 1"  # the next line of code is not taken for a continuation


def test_code_inside_a_list_item_wraps_at_the_item_width():
    lines = rendered("- item\n  ```\n  " + "abc " * 30 + "\n  ```")
    assert all(len(line) <= 80 for line in lines)
    assert any(line.lstrip().startswith(CONTINUATION) for line in lines)


def test_review_at_80_columns_shows_the_whole_line_marked(write_pack, quizapp_home, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("LINES", "24")
    write_pack(PACK.replace("    prompt: |\n      A logging helper:\n", "    prompt: |\n      A logging helper,\n"
                            "      indented in a method:\n").replace(f"      {LONG}", f"          {LONG}"),
               "wide.yaml", quizapp_home / "questions")
    result = CliRunner().invoke(cli, ["review", "--topic", "wide"], input="q\n", catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert all(len(line.rstrip()) <= 80 for line in lines)
    at = next(i for i, line in enumerate(lines) if "log_grad_norms(" in line)
    assert lines[at + 1].startswith(" " * 5 + CONTINUATION)
    assert lines[at].strip() + " " + lines[at + 1].strip().removeprefix(CONTINUATION) == LONG
