"""`quizapp reset ID [PATH]`: the starter comes back, after asking; grades are kept."""

from __future__ import annotations

from click.testing import CliRunner

from quizapp.catalog import load_catalog
from quizapp.cli import cli
from quizapp.study.store import Store

STARTER = load_catalog()["lora"].starter.read_text()


def reset(*args, input=None):
    return CliRunner().invoke(cli, ["reset", *args], input=input)


def test_asks_first_and_keeps_the_file_on_no(tmp_path):
    mine = tmp_path / "lora.py"
    mine.write_text("my work\n")
    result = reset("lora", str(mine), input="n\n")
    assert result.exit_code == 1 and "Your code in it will be lost" in result.output
    assert mine.read_text() == "my work\n"
    result = reset("lora", str(mine), input="y\n")
    assert result.exit_code == 0 and mine.read_text() == STARTER


def test_no_answer_keeps_the_file(tmp_path):
    mine = tmp_path / "lora.py"
    mine.write_text("my work\n")
    result = reset("lora", str(mine), input="")
    assert result.exit_code == 1 and "--yes" in result.output
    assert mine.read_text() == "my work\n"


def test_yes_replaces_without_asking_and_keeps_progress(tmp_path):
    mine = tmp_path / "lora.py"
    mine.write_text("my work\n")
    with Store.open() as store:
        store.record_grade("lora", status="fail", checks_passed=3, checks_total=9, device="cpu", duration_s=1.0,
                           file_path=str(mine))
    result = reset("lora", str(mine), "--yes")
    assert result.exit_code == 0 and "progress is kept" in result.output
    assert mine.read_text() == STARTER
    with Store.open() as store:
        assert [(g.status, g.checks_passed) for g in store.grades("lora")] == [("fail", 3)]


def test_default_path_a_folder_and_a_missing_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = reset("lora")  # nothing to lose: no question
    assert result.exit_code == 0 and (tmp_path / "lora.py").read_text() == STARTER
    result = reset("lora")
    assert result.exit_code == 0 and "already the starter" in result.output
    (tmp_path / "sub").mkdir()
    assert reset("lora", "sub").exit_code == 0 and (tmp_path / "sub" / "lora.py").read_text() == STARTER


def test_unknown_exercise_is_a_usage_error():
    result = reset("no_such_exercise")
    assert result.exit_code == 2 and "unknown exercise" in result.output
