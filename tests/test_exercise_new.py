"""`quizapp exercises new ID`: the folder a new exercise needs, written into a scratch exercises folder
(`--root`), graded at once by `quizapp exercises check`, and refused for an id that is taken or bad."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizapp.catalog import load_catalog
from quizapp.cli import cli
from quizapp.grading import mutants
from quizapp.grading.selfcheck import metadata_problems

TOPIC = "lr-schedules"
QUESTION = "sched-warmup-cosine-value"  # a question of that topic


def new(root: Path, *args: str):
    return CliRunner().invoke(cli, ["exercises", "new", *args, "--root", str(root)])


def check(root: Path, exercise_id: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "quizapp", "exercises", "check", exercise_id, "--root", str(root)],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def root(tmp_path) -> Path:
    """A checkout's shape: the exercises folder, and the buggy solutions beside it under tests/."""
    (tmp_path / "tests" / "grader" / "buggy").mkdir(parents=True)
    (tmp_path / "exercises").mkdir()
    return tmp_path / "exercises"


def test_the_scaffold_is_whole_and_says_what_is_left_to_write(root):
    result = new(root, "grad_clipping", "--title", "Clip: gradients by their global norm", "--topic", TOPIC)
    assert result.exit_code == 0, result.output
    folder, buggy = root / "grad_clipping", root.parent / "tests" / "grader" / "buggy" / "grad_clipping"
    assert sorted(p.name for p in folder.iterdir()) == ["checks.py", "exercise.yaml", "reference.py", "starter.py"]
    assert sorted(p.name for p in buggy.iterdir()) == ["does_nothing.py", "returns_sum.py", "starter.expect"]
    record = load_catalog(root)["grad_clipping"]  # the app's own loader reads it
    assert (record.title, record.topic, record.folder) == ("Clip: gradients by their global norm", TOPIC, folder)
    for path in [*mutants.buggy_files(buggy), buggy / mutants.STARTER_FILE]:
        assert mutants.read(path).source == path.name  # every header reads

    first = check(root, "grad_clipping")
    # The example grades: the reference passes, the starter fails cleanly, the buggy solutions hold their
    # headers and cover the one check; what is left is the author's to write.
    assert first.returncode == 1 and "FAIL  grad_clipping" in first.stdout, first.stdout + first.stderr
    problems = [line.strip()[2:] for line in first.stdout.splitlines() if line.strip().startswith("- ")]
    assert problems == [
        "exercise.yaml still holds 4 TODO(author) placeholders: write what each asks for",
        "starter.py still holds 2 TODO(author) placeholders: write what each asks for",
        "reference.py still holds 1 TODO(author) placeholder: write what each asks for",
        "checks.py still holds 2 TODO(author) placeholders: write what each asks for",
        "check returns-mean names no question (exercise.yaml `questions:`)"]

    for path in folder.iterdir():
        path.write_text(path.read_text().replace("TODO(author)", "Written"))
    meta = folder / "exercise.yaml"
    meta.write_text(meta.read_text().replace("returns-mean: []", f"returns-mean: [{QUESTION}]"))
    done = check(root, "grad_clipping")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok    grad_clipping: reference passes 1/1" in done.stdout
    assert "starter fails cleanly (0/1 pass), 2 buggy solutions hold their headers" in done.stdout


def test_without_a_title_or_a_topic_the_placeholders_stand_in(root):
    assert new(root, "grad_clipping").exit_code == 0
    folder = root / "grad_clipping"
    record = load_catalog(root)["grad_clipping"]
    assert record.title.startswith("TODO(author)") and record.topic.startswith("TODO(author)")
    assert metadata_problems(folder, {TOPIC}) == [
        "exercise.yaml: topic 'TODO(author): a topic of the question bank (quizapp list)' is not a topic of the "
        "question bank",
        "exercise.yaml still holds 6 TODO(author) placeholders: write what each asks for",
        "starter.py still holds 2 TODO(author) placeholders: write what each asks for",
        "reference.py still holds 1 TODO(author) placeholder: write what each asks for",
        "checks.py still holds 2 TODO(author) placeholders: write what each asks for"]


def test_a_taken_id_is_refused_and_nothing_is_overwritten(root):
    assert new(root, "grad_clipping").exit_code == 0
    reference = root / "grad_clipping" / "reference.py"
    reference.write_text("# mine\n")
    again = new(root, "grad_clipping")
    assert again.exit_code == 2 and "exercise grad_clipping exists already" in again.output
    assert reference.read_text() == "# mine\n"
    (root.parent / "tests" / "grader" / "buggy" / "clip_only_buggy").mkdir()  # a leftover buggy folder
    assert "exists already" in new(root, "clip_only_buggy").output
    assert not (root / "clip_only_buggy").exists()


@pytest.mark.parametrize("bad, says", [
    ("Grad_clipping", "is not an exercise id"),
    ("grad-clipping", "is not an exercise id"),
    ("grad__clipping", "is not an exercise id"),
    ("grad_clipping_", "is not an exercise id"),
    ("9lives", "is not an exercise id"),
    ("debug_grad_clipping", "ids starting with 'debug_' are debugging drills"),
])
def test_a_bad_id_is_a_usage_error(root, bad, says):
    result = new(root, bad)
    assert result.exit_code == 2 and says in result.output, result.output
    assert list(root.iterdir()) == []


def test_an_unknown_topic_is_a_usage_error_that_lists_the_topics(root):
    result = new(root, "grad_clipping", "--topic", "no-such-topic")
    assert result.exit_code == 2 and "unknown topic 'no-such-topic'" in result.output and TOPIC in result.output
    assert list(root.iterdir()) == []
