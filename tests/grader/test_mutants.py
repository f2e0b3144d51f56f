"""Every exercise graded against its buggy solutions, each of which says in its header what its grade
must show (the language: quizapp/grading/mutants.py).

For each exercise: the reference passes every check, in the order starter.expect lists them; the
starter fails cleanly and shows what starter.expect says; and every check is failed by some buggy
solution written for it. For each buggy solution (tests/grader/buggy/<exercise>/*.py): its header
reads, names only the exercise's checks, and holds for its grade.

What is particular to one exercise (a plot's data, a message's layout over several files, DDP's
broken ranks) stays in that exercise's own module, reading the same grades.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gradeutil import BUGGY, EXERCISE_IDS, EXERCISES, exercise_jobs, grade, header_of, mutant_args

from quizapp.catalog import is_drill_id
from quizapp.grading import mutants

DRILL_CHECKS = ["honest-fix", "matches-fixed-run"]  # after a drill's own symptom check
BUGGY_FILES = [path for exercise in EXERCISE_IDS for path in mutants.buggy_files(BUGGY / exercise)]


def label(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def up_front(items) -> list[tuple[str, tuple]]:
    """The grades the collected items read (conftest.py grades them before the first test)."""
    exercises = set()
    for item in items:
        params = getattr(item, "callspec", None) and item.callspec.params or {}
        if "exercise" in params:
            exercises.add(params["exercise"])
        elif "path" in params:
            exercises.add(params["path"].parent.name)
    return [job for exercise in sorted(exercises) for job in exercise_jobs(exercise)]


def read(path: Path) -> mutants.Expectation:
    """The header at `path`; one that does not read fails the test with the parser's message."""
    try:
        return mutants.read(path)
    except mutants.HeaderError as exc:
        pytest.fail(str(exc), pytrace=False)


def starter_expect(exercise: str) -> mutants.Expectation:
    path = BUGGY / exercise / mutants.STARTER_FILE
    assert path.is_file(), f"{path} is missing: it says what the starter's grade must show"
    expect = read(path)
    assert expect.checks, f"{path}: an `# expect: checks ...` line lists the exercise's checks in order"
    return expect


def check_ids(exercise: str) -> list[str]:
    return starter_expect(exercise).checks


def holds(expect: mutants.Expectation, result, exercise: str) -> None:
    report = result.report
    problems = mutants.unknown_checks(expect, check_ids(exercise))
    problems += mutants.judge(expect, report["status"], report["checks"], report.get("message"))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("exercise", EXERCISE_IDS)
def test_the_reference_passes_every_check_in_order(exercise):
    result = grade(EXERCISES / exercise / "reference.py")
    assert result.code == 0 and result.report["status"] == "pass", result.report
    assert [c["id"] for c in result.report["checks"]] == check_ids(exercise)
    assert {c["status"] for c in result.report["checks"]} == {"pass"}


@pytest.mark.parametrize("exercise", EXERCISE_IDS)
def test_the_starter_fails_cleanly(exercise):
    result = grade(EXERCISES / exercise / "starter.py")
    expect = starter_expect(exercise)
    assert result.code == 1 and result.report["status"] == "fail", result.report
    holds(expect, result, exercise)
    checks = result.report["checks"]
    if is_drill_id(exercise):
        # the broken script: it shows its symptom, in numbers, and hides nothing (honest-fix passes)
        assert [c["id"] for c in checks][1:] == DRILL_CHECKS
        assert checks[0]["status"] == "fail" and any(ch.isdigit() for ch in checks[0]["message"]), checks[0]
        assert result.status("honest-fix") == "pass", result.check("honest-fix")
    else:
        # no check passes without a solution, and the first says what stopped it
        assert all(c["status"] in ("fail", "error") for c in checks), checks
        assert "NotImplementedError" in checks[0]["message"], checks[0]


@pytest.mark.parametrize("exercise", EXERCISE_IDS)
def test_every_check_is_failed_by_some_buggy_solution(exercise):
    files = mutants.buggy_files(BUGGY / exercise)
    headers = [read(p) for p in files if p.stem not in mutants.NOT_COUNTED]
    assert mutants.unfailed(headers, check_ids(exercise)) == [], f"add a buggy solution to {BUGGY / exercise}"


@pytest.mark.parametrize("path", BUGGY_FILES, ids=label)
def test_a_buggy_solution_holds_its_header(path):
    expect = read(path)
    result = grade(*mutant_args(path, expect))
    assert result.code == (0 if expect.passes else 1), result.report
    holds(expect, result, path.parent.name)


def test_every_buggy_solution_has_a_header_with_the_marker_above():
    # The grader finds the exercise by the marker on the first line; the header follows it.
    for path in BUGGY_FILES:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first == f"# quizapp: exercise={path.parent.name}", path
        assert header_of(path) is not None, path


# -- the header language itself: it says no less than it holds, and refuses what it cannot read ----

HEADER = """# quizapp: exercise=x
# expect: fail a-check: "off by 3"
# expect: may-not-pass b-check
# expect: lacks a-check: "wrong cause"
\"\"\"A docstring.\"\"\"
"""


def verdict(**checks) -> list[tuple[str, str, str]]:
    return [(cid.replace("_", "-"), *value) for cid, value in checks.items()]


def test_a_header_that_holds_reports_nothing():
    expect = mutants.parse(HEADER)
    grade_ = verdict(a_check=("fail", "a: off by 3 (expected 1, got 4)"), b_check=("error", "raised"),
                     c_check=("pass", ""))
    assert mutants.judge(expect, "fail", grade_) == []
    assert expect.fails == {"a-check"}


@pytest.mark.parametrize("checks, problem", [
    (dict(a_check=("pass", ""), b_check=("pass", ""), c_check=("pass", "")), "a-check: expected fail, got pass"),
    (dict(a_check=("fail", "off by 3, a wrong cause"), b_check=("pass", ""), c_check=("pass", "")),
     'a-check: the message holds "wrong cause"'),
    (dict(a_check=("fail", "off by three"), b_check=("pass", ""), c_check=("pass", "")),
     'a-check: the message lacks "off by 3"'),
    (dict(a_check=("fail", "off by 3"), b_check=("pass", ""), c_check=("fail", "4 != 5")),
     "c-check: expected pass, got fail"),
    (dict(a_check=("fail", "off by 3"), b_check=("pass", ""), c_check=("error", "internal grader error: x")),
     "an internal grader error in c-check"),
])
def test_a_grade_that_goes_against_the_header_is_named(checks, problem):
    found = mutants.judge(mutants.parse(HEADER), "fail", verdict(**checks))
    assert any(p.startswith(problem) for p in found), found


def test_a_failing_message_needs_a_number_unless_the_header_says_otherwise():
    seen = verdict(a_check=("fail", "the loss is wrong"))
    assert mutants.judge(mutants.parse("# m\n# expect: fail a-check\n"), "fail", seen) == [
        "a-check: the message holds no number: the loss is wrong"]
    assert mutants.judge(mutants.parse("# m\n# expect: fail a-check\n# expect: no-number a-check\n"), "fail", seen) == []


def test_pass_means_every_check_passes_and_the_order_can_be_pinned():
    seen = verdict(a_check=("pass", ""), b_check=("skip", "nothing to check: no step ran"))
    assert mutants.judge(mutants.parse("# m\n# expect: pass\n"), "fail", seen)[0].startswith(
        "expected every check to pass, the grade is fail; b-check: skip")
    expect = mutants.parse("# m\n# expect: checks b-check a-check\n# expect: skip b-check\n")
    assert mutants.judge(expect, "fail", seen) == [
        "the grade reported the checks ['a-check', 'b-check'], expected ['b-check', 'a-check']"]


@pytest.mark.parametrize("text, error", [
    ("# m\n\"\"\"doc\"\"\"\n", "f.py: no `# expect:` header"),
    ("# m\n# expect: fails a-check\n", "f.py:2: unknown keyword 'fails'"),
    ("# m\n# expect: fail a-check b-check: \"x\"\n", "f.py:2: words belong to one check"),
    ("# m\n# expect: says a-check: x\n", "f.py:2: expected a double-quoted string"),
    ("# m\n# expect: fail a-check\n# expect: error a-check\n", "f.py:3: a-check is both fail and error"),
    ("# m\n# expect: pass\n# expect: fail a-check\n", "f.py:3: `pass` and a failing check"),
    ("# m\nimport torch\n# expect: pass\n", "f.py:3: an `# expect:` line below the header"),
    ("# m\n# expect: says a-check: \"x\"\n", "f.py: the header names no status"),
    ("# m\n# expect: fail A_check\n", "f.py:2: 'A_check' is not a check id"),
])
def test_a_header_that_does_not_read_is_refused_with_its_line(text, error):
    with pytest.raises(mutants.HeaderError) as caught:
        mutants.parse(text, "f.py")
    assert str(caught.value).startswith(error), caught.value


def test_a_check_the_exercise_does_not_have_is_named_with_its_line():
    expect = mutants.parse("# m\n# expect: fail a-check\n# expect: says lora-nope: \"x\"\n", "f.py")
    assert mutants.unknown_checks(expect, ["a-check", "b-check"]) == [
        "f.py:3: 'lora-nope' is not a check of this exercise (its checks: a-check, b-check)"]
