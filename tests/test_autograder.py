"""`quizapp autograder gradescope`: the zip, and what Gradescope gets back from it.

The fast tests call the Gradescope runner (quizapp.grading.gradescope) in this process on made-up
reports and folders. The slow ones build the zip, unpack it into a folder that stands for
/autograder, run its setup.sh into a fresh venv that borrows this environment's packages (so pip
needs no network: torch is already there), and run its run_autograder on a correct, a wrong, two
hostile and two unrunnable submissions. Every results.json is held to tests/data's JSON Schema,
written from Gradescope's autograder specification.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from quizapp.cli import cli
from quizapp.grading import gradescope
from quizapp.grading.gradescope import AutograderConfig, GradedCheck
from quizapp.grading.result import CheckResult, GradeReport

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "tests" / "data" / "gradescope_results.schema.json").read_text(encoding="utf-8"))
EXERCISE = "label_smoothing"
REFERENCE = ROOT / "exercises" / EXERCISE / "reference.py"
BUGGY = ROOT / "tests" / "grader" / "buggy" / EXERCISE / "sum_not_mean.py"
HOSTILE = ROOT / "tests" / "grader" / "hostile" / "terminal_escapes.py"


def valid(results: dict) -> dict:
    jsonschema.Draft202012Validator(SCHEMA).validate(results)
    return results


def test_the_schema_is_a_schema_and_holds_the_specification_example():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    valid({"score": 44.0, "execution_time": 136, "output": "Text", "output_format": "simple_format",
           "visibility": "after_due_date", "stdout_visibility": "visible", "extra_data": {},
           "tests": [{"score": 2.0, "max_score": 2.0, "status": "passed", "name": "Your name here",
                      "number": "1.1", "output": "...", "tags": ["a"], "visibility": "visible"}],
           "leaderboard": [{"name": "Accuracy", "value": 0.926}, {"name": "Time", "value": 15.1, "order": "asc"}]})
    for wrong in ({"output": "no score anywhere"}, {"score": 1, "tests": [{"status": "ok"}]},
                  {"score": 1, "visibility": "sometimes"}, {"score": 1, "scores": 2}):
        with pytest.raises(jsonschema.ValidationError):
            valid(wrong)


# ---------------------------------------------------------------------------------------------------
# The runner, on made-up reports


def config(points=(1.0, 1.0, 1.0), **changes) -> AutograderConfig:
    checks = tuple(GradedCheck(f"c{i}", f"Check {i}", p, (f"q{i}",)) for i, p in enumerate(points))
    return AutograderConfig(exercise="demo", title="Demo", submission="demo.py", checks=checks,
                            questions={"q0": "What is zero?", "q1": "What is one?"}, **changes)


def report(status, statuses, message=None) -> GradeReport:
    checks = [CheckResult(f"c{i}", f"Check {i}", s, "" if s == "pass" else f"{s} with 0.5 off") for i, s in enumerate(statuses)]
    review = [f"q{i}" for i, s in enumerate(statuses) if s == "fail"]
    return GradeReport(exercise="demo", file="demo.py", status=status, message=message, device="cpu",
                       torch="2.13.0+cpu", duration_s=1.0, checks=checks, sandbox="sandbox: test", review=review)


def scores(results):
    return [(t["score"], t["max_score"], t["status"]) for t in results["tests"]]


def test_a_pass_earns_every_point_a_skip_included():
    results = valid(gradescope.results_for(report("pass", ["pass", "skip", "pass"]), config(), notes=[], elapsed=2.4))
    assert results["score"] == 3.0 and results["execution_time"] == 2
    assert scores(results) == [(1.0, 1.0, "passed")] * 3
    assert results["tests"][1]["output"].startswith("Not applicable here")
    assert "Study next" not in results["output"] and "sandbox: test" in results["output"]


def test_a_fail_earns_the_passed_checks_only_and_names_what_to_study():
    results = valid(gradescope.results_for(report("fail", ["pass", "fail", "skip"]), config((2.0, 1.0, 1.0)),
                                           notes=[], elapsed=1.0))
    assert results["score"] == 2.0
    assert scores(results) == [(2.0, 2.0, "passed"), (0.0, 1.0, "failed"), (0.0, 1.0, "failed")]
    assert "fail with 0.5 off" in results["tests"][1]["output"] and "q1" in results["tests"][1]["output"]
    assert "- q1: What is one?" in results["output"] and "2 of 4 points" in results["output"]


def test_a_run_that_did_not_finish_scores_zero_and_lists_every_check():
    cut = report("error", ["pass", "error"], message="timed out after 300 s")
    results = valid(gradescope.results_for(cut, config(), notes=[], elapsed=300.2))
    assert results["score"] == 0.0
    assert scores(results) == [(0.0, 1.0, "failed")] * 3
    assert "could not be run" in results["output"] and "timed out after 300 s" in results["output"]
    assert results["tests"][2]["output"].startswith("Not run")


def test_points_spread_over_a_total_add_up_to_it():
    thirds = config((10 / 3, 10 / 3, 10 / 3))
    full = valid(gradescope.results_for(report("pass", ["pass"] * 3), thirds, notes=[], elapsed=1))
    assert full["score"] == 10.0 and sum(t["max_score"] for t in full["tests"]) == pytest.approx(10, abs=1e-3)


def test_visibility_settings_reach_the_results():
    results = gradescope.results_for(report("pass", ["pass"] * 3), config(visibility="after_due_date",
                                                                           stdout_visibility="visible"),
                                     notes=[], elapsed=1)
    assert results["visibility"] == "after_due_date" and results["stdout_visibility"] == "visible"
    assert {t["visibility"] for t in valid(results)["tests"]} == {"after_due_date"}


def test_the_config_round_trips_and_refuses_what_it_cannot_use():
    assert AutograderConfig.from_json(json.loads(json.dumps(config().to_json()))) == config()
    for change in ({"format": 2}, {"visibility": "sometimes"}, {"timeout_s": float("nan")}, {"checks": []},
                   {"checks": [{"id": "c0", "points": -1}]}, {"submission": ""}):
        with pytest.raises(gradescope.ConfigError):
            AutograderConfig.from_json({**config().to_json(), **change})


@pytest.mark.parametrize(("files", "chosen"), [
    ({"demo.py": "#", "helper.py": "#"}, "demo.py"),
    ({"hw/demo.py": "#", "hw/other.py": "#"}, "hw/demo.py"),
    ({"my_solution.py": "#", "notes.txt": ""}, "my_solution.py"),
    ({"a.py": "#", "b.py": "# quizapp: exercise=demo\n", "__pycache__/c.py": "#"}, "b.py"),
])
def test_the_submission_is_found(tmp_path, files, chosen):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    path, note = gradescope.find_submission(tmp_path, config())
    assert path == tmp_path / chosen
    assert (note == "") == (chosen == "demo.py")


@pytest.mark.parametrize("files", [{}, {"notes.txt": ""}, {"a.py": "#", "b.py": "#"}])
def test_a_missing_submission_says_what_to_submit(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    path, message = gradescope.find_submission(tmp_path, config())
    assert path is None
    assert message.startswith("No demo.py in the submission") and "Submit your solution as demo.py" in message
    assert all(name in message for name in files)
    results = valid(gradescope.not_graded(config(), message, elapsed=0.1))
    assert results["score"] == 0.0 and all(t["status"] == "failed" for t in results["tests"])
    assert message in results["output"]


def test_a_broken_autograder_still_writes_results(tmp_path, quizapp_home):
    assert gradescope.main(["--root", str(tmp_path)]) == 0
    results = valid(json.loads((tmp_path / "results" / "results.json").read_text()))
    assert results["score"] == 0 and "the autograder is broken" in results["output"]
    assert "autograder.json is missing" in results["output"]
    assert not quizapp_home.exists()  # the run used a temporary data folder of its own


# ---------------------------------------------------------------------------------------------------
# The builder's refusals: one line, exit code 2, before anything is built


def refused(*args):
    result = CliRunner().invoke(cli, ["autograder", "gradescope", *args])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output and "Grading the reference" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("quizapp autograder: ")
    return lines[0]


def test_an_unknown_exercise_is_refused(tmp_path):
    assert "unknown exercise 'no_such_thing' (known: " in refused("no_such_thing", "-o", str(tmp_path / "a.zip"))


def test_an_output_that_cannot_be_written_is_refused(tmp_path):
    (tmp_path / "file.txt").write_text("")
    assert "it is a folder" in refused(EXERCISE, "-o", str(tmp_path))
    assert "there is no folder" in refused(EXERCISE, "-o", str(tmp_path / "missing" / "a.zip"))
    assert "is not a folder" in refused(EXERCISE, "-o", str(tmp_path / "file.txt" / "a.zip"))
    assert not list(tmp_path.rglob("*.zip*"))


@pytest.mark.parametrize("points", ["0", "-3", "nan", "inf"])
def test_a_total_of_points_must_be_a_positive_number(tmp_path, points):
    assert "--points" in refused(EXERCISE, "-o", str(tmp_path / "a.zip"), "--points", points)


# ---------------------------------------------------------------------------------------------------
# End to end: build, set up, grade


def unpack(zip_path: Path, dest: Path) -> None:
    """Unpack as `unzip` does: the modes the zip records (run_autograder must stay executable)."""
    with zipfile.ZipFile(zip_path) as zf:
        for member in zf.infolist():
            target = zf.extract(member, dest)
            mode = (member.external_attr >> 16) & 0o777
            if mode:
                os.chmod(target, mode)


def grading_env(root: Path, python: Path, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "QUIZAPP_GRADE_WRITABLE"}  # no test folder writable to grades
    return {**env, "QUIZAPP_AUTOGRADER_ROOT": str(root), "QUIZAPP_PYTHON": str(python), "QUIZAPP_HOME": str(home),
            "PIP_NO_INDEX": "1"}


@pytest.fixture(scope="module")
def autograder(tmp_path_factory):
    """The zip, built from this checkout, unpacked into ROOT/source and set up into a fresh venv."""
    base = tmp_path_factory.mktemp("gradescope")
    zip_path = base / "autograder.zip"
    build = subprocess.run([sys.executable, "-m", "quizapp", "autograder", "gradescope", EXERCISE, "-o", str(zip_path)],
                           capture_output=True, text=True, cwd=base, timeout=600)
    assert build.returncode == 0, build.stderr
    assert "9 checks, 9 points; students submit label_smoothing.py" in build.stdout

    # A venv of its own, borrowing this environment's packages (torch, pip, quizapp's dependencies)
    # through a .pth file: setup.sh finds them installed, so PIP_NO_INDEX=1 is all it needs.
    python_dir = base / "venv"
    venv.EnvBuilder(with_pip=False).create(python_dir)
    site = next(python_dir.glob("lib/python*/site-packages"))
    (site / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    python = python_dir / "bin" / "python"

    root = base / "autograder"
    unpack(zip_path, root / "source")
    (root / "run_autograder").write_bytes((root / "source" / "run_autograder").read_bytes())  # as Gradescope copies it
    (root / "run_autograder").chmod(0o755)
    home = base / "outer-home"
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], capture_output=True, text=True,
                           env=grading_env(root, python, home), timeout=600)
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]
    assert f"the reference of {EXERCISE} passes here" in setup.stdout
    return {"zip": zip_path, "root": root, "python": python, "home": home, "base": base}


@pytest.mark.slow
def test_the_zip_holds_what_gradescope_needs(autograder):
    with zipfile.ZipFile(autograder["zip"]) as zf:
        members = {m.filename: m for m in zf.infolist()}
        setup = zf.read("setup.sh").decode()
        settings = json.loads(zf.read("autograder.json"))
    (wheel,) = [name for name in members if name.endswith(".whl")]
    assert set(members) == {"setup.sh", "run_autograder", "autograder.json", wheel}
    assert all((members[name].external_attr >> 16) & 0o111 for name in ("setup.sh", "run_autograder"))
    import importlib.metadata

    torch_version = importlib.metadata.version("torch").split("+")[0]
    assert f'"torch=={torch_version}" --index-url "https://download.pytorch.org/whl/cpu"' in setup
    assert f'--no-deps --force-reinstall "$here/{wheel}"' in setup and "@" not in setup.replace("@@", "")
    assert settings["exercise"] == EXERCISE and settings["submission"] == f"{EXERCISE}.py"
    assert [c["points"] for c in settings["checks"]] == [1.0] * 9
    assert settings["built_with"]["torch"] == torch_version and settings["built_with"]["wheel"] == wheel
    assert (autograder["root"] / "source" / "python-path").read_text().strip() == str(autograder["python"])


def run_autograder(autograder, files: dict[str, bytes]) -> tuple[dict, str]:
    root = autograder["root"]
    submission = root / "submission"
    if submission.exists():
        subprocess.run(["rm", "-rf", str(submission)], check=True)
    submission.mkdir()
    for name, data in files.items():
        (submission / name).write_bytes(data)
    done = subprocess.run([str(root / "run_autograder")], capture_output=True, text=True, cwd=autograder["base"],
                          env=grading_env(root, autograder["python"], autograder["home"]), timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    raw = (root / "results" / "results.json").read_text(encoding="utf-8")
    assert not autograder["home"].exists(), "a grade wrote into the QUIZAPP_HOME it was given"
    return valid(json.loads(raw)), raw


@pytest.mark.slow
def test_a_correct_submission_earns_full_marks(autograder):
    results, _ = run_autograder(autograder, {f"{EXERCISE}.py": REFERENCE.read_bytes()})
    assert results["score"] == 9.0
    assert all(t["status"] == "passed" and t["score"] == t["max_score"] == 1.0 for t in results["tests"])
    assert "Passed: every check that applies here passed (9 of 9)" in results["output"]
    assert "Graded on cpu with torch 2.13" in results["output"] and "sandbox: " in results["output"]


@pytest.mark.slow
def test_a_wrong_submission_earns_part_and_names_what_to_study(autograder):
    results, _ = run_autograder(autograder, {f"{EXERCISE}.py": BUGGY.read_bytes()})
    assert 0 < results["score"] < 9
    failed = [t for t in results["tests"] if t["status"] == "failed"]
    assert failed and all(t["score"] == 0 for t in failed)
    assert any("summed, not averaged" in t["output"] for t in failed)
    assert "Study next" in results["output"] and "- ls-implement-by-hand: " in results["output"]


@pytest.mark.slow
def test_a_hostile_submission_gets_its_output_escaped(autograder):
    results, raw = run_autograder(autograder, {f"{EXERCISE}.py": HOSTILE.read_bytes()})
    assert results["score"] == 1.0  # it raises ValueError for any input: only the validation check passes
    assert "\x1b" not in raw and "\\u001b" not in raw and "\\x1b[2J" in raw  # shown escaped, never acted on


FORGER = f"""# quizapp: exercise={EXERCISE}
import json, os
forged = {{"score": 1000, "output": "FORGED", "tests": []}}
path = os.path.join(os.environ.get("QUIZAPP_AUTOGRADER_ROOT", "/autograder"), "results", "results.json")
try:
    with open(path, "w") as fh:
        json.dump(forged, fh)
    print("WROTE the results")
except OSError as exc:
    print("DENIED", exc)


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    return logits.sum() * 0
""".encode()


@pytest.mark.slow
def test_a_submission_cannot_write_its_own_results(autograder):
    results, raw = run_autograder(autograder, {f"{EXERCISE}.py": FORGER})
    assert "FORGED" not in raw and results["score"] < 9


@pytest.mark.slow
def test_a_missing_file_scores_zero_and_names_the_file_to_submit(autograder):
    results, _ = run_autograder(autograder, {"notes.txt": b"see attached", "README.md": b"#"})
    assert results["score"] == 0 and len(results["tests"]) == 9
    assert f"No {EXERCISE}.py in the submission" in results["output"]
    assert f"Submit your solution as {EXERCISE}.py" in results["output"]


@pytest.mark.slow
def test_a_file_that_cannot_import_scores_zero_with_the_reason(autograder):
    source = f"# quizapp: exercise={EXERCISE}\nimport no_such_module_anywhere\n".encode()
    results, _ = run_autograder(autograder, {"my_attempt.py": source})
    assert results["score"] == 0 and all(t["status"] == "failed" for t in results["tests"])
    assert "could not be run" in results["output"] and "no_such_module_anywhere" in results["output"]
    assert "Graded my_attempt.py, the only .py file submitted" in results["output"]


@pytest.mark.slow
def test_an_installed_quizapp_packs_the_same_wheel_again(autograder, tmp_path):
    """From the venv setup.sh installed into (a wheel install: no source checkout), the builder packs
    the installed files again: the same members as the wheel it was installed from."""
    again = tmp_path / "again.zip"
    build = subprocess.run([str(autograder["python"]), "-m", "quizapp", "autograder", "gradescope", EXERCISE,
                            "-o", str(again)], capture_output=True, text=True, cwd=tmp_path, timeout=600,
                           env={**os.environ, "PIP_NO_INDEX": "1"})
    assert build.returncode == 0, build.stderr

    def wheel_names(path):
        with zipfile.ZipFile(path) as zf:
            (name,) = [n for n in zf.namelist() if n.endswith(".whl")]
            (tmp_path / name).write_bytes(zf.read(name))
            with zipfile.ZipFile(tmp_path / name) as wheel:
                return sorted(wheel.namelist())

    assert wheel_names(again) == wheel_names(autograder["zip"])
