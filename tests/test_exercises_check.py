"""`quizapp exercises check`: an exercise folder is checked whole (metadata, files, markers) and by
what its reference and starter do under the grader."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from quizapp.grading.result import CheckResult, GradeReport
from quizapp.grading.selfcheck import buggy_problems, grade_problems, metadata_problems

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
    result = subprocess.run([*run, "warmup_cosine"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    buggy = len(list((ROOT / "tests" / "grader" / "buggy" / "warmup_cosine").glob("*.py")))
    assert ("ok    warmup_cosine: reference passes 6/6 (" in result.stdout
            and f"starter fails cleanly (0/6 pass), {buggy} buggy solutions hold their headers" in result.stdout)
    quick = subprocess.run([*run, "warmup_cosine", "label_smoothing", "--no-buggy"], capture_output=True, text=True,
                           timeout=300)
    assert quick.returncode == 0 and "buggy" not in quick.stdout, quick.stdout + quick.stderr
    assert "All 2 exercises are whole." in quick.stdout
    unknown = subprocess.run([*run, "nope"], capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2 and "unknown exercise nope" in unknown.stderr


def test_placeholders_the_scaffold_left_are_named(tmp_path):
    folder = copy(tmp_path)
    checks = folder / "checks.py"
    checks.write_text("# TODO(author): one line\n# TODO(author): another\n" + checks.read_text())
    assert metadata_problems(folder, {"lr-schedules"}) == [
        "checks.py still holds 2 TODO(author) placeholders: write what each asks for"]


# -- the buggy solutions of a source checkout ---------------------------------------------------

MARK = "# quizapp: exercise=toy\n"
TOY_CHECKS = ["a-check", "b-check"]


def toy(tmp_path: Path, files: dict[str, str], starter_expect: str | None = None) -> Path:
    """An exercise folder `toy` and its buggy solutions beside it, as in a checkout."""
    folder = tmp_path / "exercises" / "toy"
    folder.mkdir(parents=True)
    buggy = tmp_path / "tests" / "grader" / "buggy" / "toy"
    buggy.mkdir(parents=True)
    for name, text in files.items():
        (buggy / name).write_text(text)
    if starter_expect is not None:
        (buggy / "starter.expect").write_text(starter_expect)
    return folder


def verdicts(**grades: tuple[str, ...]):
    """A grade function giving each file (by name) its checks' (status, message) pairs, and the devices asked."""
    asked = {}

    def grade(file, folder, exercise_id, device=None):
        asked[Path(file).stem] = device
        checks = [CheckResult(cid, cid, *pair) for cid, pair in zip(TOY_CHECKS, grades[Path(file).stem])]
        status = "pass" if all(c.status == "pass" for c in checks) else "fail"
        return GradeReport("toy", str(file), status, None, "cpu", "2", 0.1, checks)

    return grade, asked


def test_each_buggy_solution_is_held_to_its_header_and_each_check_needs_one(tmp_path):
    folder = toy(tmp_path, {
        "off_by_one.py": MARK + "# expect: fail a-check\n",
        "swapped.py": MARK + '# expect: fail a-check: "swapped"\n',
        "on_cpu.py": MARK + "# expect: fail a-check\n# expect: device cpu\n",
        "nameless.py": MARK + "import torch\n",
        "stranger.py": MARK + "# expect: fail c-check\n",
        "does_nothing.py": MARK + "# expect: fail a-check b-check\n",  # fails b-check, written for none
    }, starter_expect=None)
    grade, asked = verdicts(off_by_one=(("fail", "off by 1"), ("pass", "")),
                            swapped=(("fail", "off by 2"), ("pass", "")),
                            on_cpu=(("fail", "off by 3"), ("pass", "")),
                            does_nothing=(("fail", "0 steps"), ("fail", "0 steps")))
    starter = report("fail", "error", "error")
    problems, graded = buggy_problems(folder, TOY_CHECKS, starter, grade)
    assert graded == 4 and asked == {"does_nothing": None, "off_by_one": None, "on_cpu": "cpu", "swapped": None}
    assert problems == [
        "nameless.py: no `# expect:` header: say what this solution's grade must show (`# expect: fail CHECK`, "
        "or `# expect: pass` for a correct one)",
        "stranger.py:2: 'c-check' is not a check of this exercise (its checks: a-check, b-check)",
        'swapped.py: its header does not hold: a-check: the message lacks "swapped": off by 2',
        "no starter.expect in tests/grader/buggy/toy/: say what the starter's grade must show",
        "no buggy solution fails b-check: add one to tests/grader/buggy/toy/",
    ]


def test_the_starter_is_held_to_starter_expect(tmp_path):
    folder = toy(tmp_path, {"off_by_one.py": MARK + "# expect: fail a-check b-check\n"},
                 starter_expect="# expect: checks a-check b-check\n# expect: error a-check b-check\n")
    grade, _ = verdicts(off_by_one=(("fail", "off by 1"), ("fail", "off by 2")))

    def starter(*statuses):
        checks = [CheckResult(cid, cid, status, "NotImplementedError") for cid, status in zip(TOY_CHECKS, statuses)]
        return GradeReport("toy", "starter.py", "fail", None, "cpu", "2", 0.1, checks)

    assert buggy_problems(folder, TOY_CHECKS, starter("error", "error"), grade) == ([], 1)
    assert buggy_problems(folder, TOY_CHECKS, starter("error", "fail"), grade)[0] == [
        "starter.expect does not hold for the starter: b-check: expected error, got fail (NotImplementedError)"]


def test_an_installed_quizapp_has_no_buggy_solutions_and_says_nothing_of_them(tmp_path):
    folder = tmp_path / "_data" / "exercises" / "toy"
    folder.mkdir(parents=True)
    assert buggy_problems(folder, TOY_CHECKS, report("fail", "error"), verdicts()[0]) == ([], None)


def test_the_command_names_a_header_that_does_not_hold_and_a_check_no_bug_fails(tmp_path):
    root = tmp_path / "exercises"
    copy(root, "warmup_cosine")
    buggy = tmp_path / "tests" / "grader" / "buggy" / "warmup_cosine"
    shutil.copytree(ROOT / "tests" / "grader" / "buggy" / "warmup_cosine", buggy)
    (buggy / "not_resumable.py").unlink()  # the one written for "resume"
    ramp = buggy / "ramp_too_slow.py"
    ramp.write_text(ramp.read_text().replace("# expect: fail schedule-formula", "# expect: fail first-step-zero", 1))
    run = [sys.executable, "-m", "quizapp", "exercises", "check", "warmup_cosine", "--root", str(root)]
    result = subprocess.run(run, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    problems = [line.strip() for line in result.stdout.splitlines() if line.strip().startswith("- ")]
    assert len(problems) == 2, result.stdout
    assert problems[0].startswith("- ramp_too_slow.py: its header does not hold: first-step-zero: expected fail, got "
                                  "pass; schedule-formula: expected pass, got fail (")
    assert problems[1] == "- no buggy solution fails resume: add one to tests/grader/buggy/warmup_cosine/"
