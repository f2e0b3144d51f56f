"""`quizapp exercises check`: an exercise folder is checked whole (metadata, files, markers) and by
what its reference and starter do under the grader."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from quizapp.grading.result import CheckResult, GradeReport
from quizapp.grading.selfcheck import grade_problems, metadata_problems

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ROOT / "exercises"
TOPICS = {"lr-schedules", "lora"}


def copy(tmp_path: Path, exercise: str = "warmup_cosine") -> Path:
    folder = tmp_path / exercise
    shutil.copytree(EXERCISES / exercise, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def report(status: str, *statuses: str, message: str = "") -> GradeReport:
    checks = [CheckResult(f"c{i}", f"Check {i}", s, message) for i, s in enumerate(statuses)]
    return GradeReport("x", "x.py", status, None, "cpu", "2", 0.1, checks)


def test_a_shipped_exercise_has_no_metadata_problem(tmp_path):
    topic = "lr-schedules"
    assert metadata_problems(copy(tmp_path), {topic}) == []


def test_each_metadata_problem_is_named(tmp_path):
    folder = copy(tmp_path)
    yaml_text = (folder / "exercise.yaml").read_text()
    (folder / "exercise.yaml").write_text(
        yaml_text.replace("id: warmup_cosine", "id: warmup").replace("difficulty: ", "difficulty: 9 #"))
    (folder / "starter.py").write_text("def f():\n    pass\n")
    (folder / "checks.py").unlink()
    problems = metadata_problems(folder, {"nothing"})
    assert "checks.py is missing" in problems
    assert "exercise.yaml: id is 'warmup', but the folder is 'warmup_cosine'" in problems
    assert "exercise.yaml: difficulty is 9, expected a whole number from 1 to 5" in problems
    assert any(p.startswith("exercise.yaml: topic 'lr-schedules' is not a topic") for p in problems)
    assert "starter.py does not carry `# quizapp: exercise=warmup_cosine` in its first lines" in problems


def test_a_yaml_that_does_not_read_is_a_problem_not_a_traceback(tmp_path):
    folder = copy(tmp_path)
    (folder / "exercise.yaml").write_text("id: [unclosed\n")
    problems = metadata_problems(folder, TOPICS)
    assert len(problems) == 1 and problems[0].startswith("exercise.yaml does not read:")


def test_grades_that_show_a_broken_exercise():
    assert grade_problems(report("pass", "pass", "pass"), report("fail", "error", "error")) == []
    assert grade_problems(report("fail", "pass", "fail"), report("fail", "error", "error"))[0].startswith(
        "the reference does not pass (fail): c1: fail")
    assert grade_problems(report("pass", "pass", "pass"), report("pass", "pass", "pass")) == [
        "the starter passes every check: the checks do not test the exercise"]
    assert grade_problems(report("pass", "pass", "pass"), report("fail", "pass", "error")) == [
        "the starter passes c0: those checks pass without a solution"]
    assert grade_problems(report("pass", "pass"), report("fail", "error", message="internal grader error: X")) == [
        "an internal grader error in c0"]


def test_a_drill_names_its_source_and_symptom(tmp_path):
    folder = copy(tmp_path, "debug_log_softmax")
    assert metadata_problems(folder, {"debugging-nans"}) == []
    text = (folder / "exercise.yaml").read_text()
    (folder / "exercise.yaml").write_text(text.replace('source: "skorch-dev/skorch#481:', 'source: "skorch issue 481:')
                                          .replace("symptom: the loss", "symptom_: the loss"))
    assert metadata_problems(folder, {"debugging-nans"}) == [
        "exercise.yaml: source is 'skorch issue 481: torch.log(y_pred) in NeuralNetClassifier.get_loss may cause "
        "NaN', expected 'owner/repo#N: title' (the public report)",
        "exercise.yaml: symptom is missing or empty (one line: what the broken script shows)"]
    (folder / "exercise.yaml").write_text(text)
    starter = (folder / "starter.py").read_text()
    (folder / "starter.py").write_text(starter.replace("skorch-dev/skorch#481", "a bug report"))
    assert metadata_problems(folder, {"debugging-nans"}) == ["starter.py does not name its source skorch-dev/skorch#481"]


def test_a_drill_starter_may_pass_honest_fix_and_nothing_else():
    def drill_report(status, *statuses):
        ids = ("loss-finite", "honest-fix", "matches-fixed-run")
        return GradeReport("d", "d.py", status, None, "cpu", "2", 0.1,
                           [CheckResult(i, i, s, "") for i, s in zip(ids, statuses)])

    good, broken = drill_report("pass", "pass", "pass", "pass"), drill_report("fail", "fail", "pass", "fail")
    assert grade_problems(good, broken, drill=True) == []
    assert grade_problems(good, broken) == ["the starter passes honest-fix: those checks pass without a solution"]
    assert grade_problems(good, drill_report("fail", "pass", "pass", "fail"), drill=True) == [
        "the starter passes loss-finite: those checks pass without a solution"]


def test_the_command_checks_real_exercises_and_refuses_an_unknown_id():
    run = [sys.executable, "-m", "quizapp", "exercises", "check"]
    result = subprocess.run([*run, "warmup_cosine", "label_smoothing"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok    warmup_cosine: reference passes 6/6" in result.stdout
    assert "All 2 exercises are whole." in result.stdout
    unknown = subprocess.run([*run, "nope"], capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2 and "unknown exercise nope" in unknown.stderr
