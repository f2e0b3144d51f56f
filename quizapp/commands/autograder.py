"""`quizapp autograder gradescope ID`: the zip Gradescope's "zip file upload" autograder takes.

The zip holds, at its root:

- `setup.sh`: installs a CPU build of torch at the version installed here, then quizapp from the
  wheel below, then grades the exercise's reference once (the templates are in gradescope_template/);
- `run_autograder`: grades /autograder/submission and writes /autograder/results/results.json, by
  `python -m quizapp.grading.gradescope`;
- `autograder.json`: what to grade and how (quizapp.grading.gradescope.AutograderConfig): the
  exercise, the file to submit, each check's title, points and questions, the questions' titles;
- `quizapp-VERSION-py3-none-any.whl`: this very quizapp, built from its source checkout (or, for an
  installed quizapp, packed again from its installed files).

Before building, the exercise's reference is graded here on the CPU: it must pass, and its checks
(their order and titles) are what the zip records.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import click

import quizapp
from quizapp import __version__
from quizapp.atomic import replacing
from quizapp.catalog import Exercise, load_catalog
from quizapp.commands.common import display_path
from quizapp.grading.gradescope import CONFIG_NAME, AutograderConfig, GradedCheck
from quizapp.words import plural

TEMPLATES = Path(__file__).resolve().parent / "gradescope_template"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
ZIP_TIME = (2020, 1, 1, 0, 0, 0)  # every member but the wheel the same bytes for the same inputs
BUILD_TIMEOUT_S = 600


def fail(message: str, code: int) -> int:
    click.echo(f"quizapp autograder: {message}", err=True)
    return code


class BuildError(Exception):
    """The zip cannot be built here (not the user's input): exit code 1."""


def build_gradescope(exercise_id: str, output: Path, points: float | None) -> int:
    catalog = load_catalog()
    exercise = catalog.get(exercise_id)
    if exercise is None:
        return fail(f"unknown exercise '{exercise_id}' (known: {', '.join(catalog)})", 2)
    if (problem := output_problem(output)) is not None:
        return fail(problem, 2)
    if points is not None and not (math.isfinite(points) and 0 < points <= 1e6):
        return fail(f"--points {points:g} is not a total of points above 0 (and at most 1e6)", 2)
    try:
        weights = exercise_weights(exercise)
        torch_version = installed_torch()
        click.echo(f"Grading the reference of {exercise_id} on the CPU...", err=True)
        checks = reference_checks(exercise, weights, points)
        questions = question_titles(c for check in checks for c in check.questions)
        with tempfile.TemporaryDirectory(prefix="quizapp-autograder-") as tmp:
            click.echo("Building the quizapp wheel...", err=True)
            wheel = project_wheel(Path(tmp))
            config = AutograderConfig(
                exercise=exercise.id, title=exercise.title, submission=f"{exercise.id}.py", checks=checks,
                questions=questions,
                built_with={"quizapp": __version__, "torch": torch_version, "torch_index": TORCH_INDEX,
                            "wheel": wheel.name, "python": platform.python_version()})
            members = zip_members(config, wheel, torch_version)
            size = write_zip(output, members, wheel)
    except BuildError as exc:
        return fail(str(exc), 1)
    except OSError as exc:
        return fail(f"cannot write {display_path(output)}: {exc.strerror or exc}", 2)
    total = config.total_points
    click.echo(f"Wrote {display_path(output)} ({size / 1e6:.1f} MB): {exercise.title} ({exercise.id}), "
               f"{plural(len(checks), 'check')}, {total:g} points; students submit {config.submission}.")
    click.echo(f"Pinned: torch {torch_version} (CPU) and quizapp {__version__}. Upload it as the assignment's "
               "autograder (zip file upload); docs/gradescope.md walks through it.")
    return 0


def output_problem(output: Path) -> str | None:
    """Why the zip cannot be written at `output`, found before anything is built; None when it can."""
    shown = display_path(output)
    if output.is_dir():
        return f"cannot write {shown}: it is a folder; give the zip's file name (-o FOLDER/autograder.zip)"
    folder = output.absolute().parent
    if not folder.exists():
        return f"cannot write {shown}: there is no folder {display_path(folder)}"
    if not folder.is_dir():
        return f"cannot write {shown}: {display_path(folder)} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK) or (output.exists() and not os.access(output, os.W_OK)):
        return f"cannot write {shown}: permission denied"
    return None


def exercise_weights(exercise: Exercise) -> dict[str, float]:
    """The checks' relative weights the exercise gives in its exercise.yaml (`points: {check-id: N}`);
    a check it leaves out weighs 1."""
    import yaml

    data = yaml.safe_load((exercise.folder / "exercise.yaml").read_text(encoding="utf-8")) or {}
    given = data.get("points") or {}
    if not isinstance(given, dict):
        raise BuildError(f"{exercise.id}/exercise.yaml: points must map check ids to numbers")
    weights = {}
    for check, value in given.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise BuildError(f"{exercise.id}/exercise.yaml: points of '{check}' is {value!r}, not a number of 0 or more")
        weights[str(check)] = float(value)
    return weights


def installed_torch() -> str:
    """The version of the torch installed here, without its local label (2.13.0+cpu -> 2.13.0)."""
    try:
        version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        raise BuildError("torch is not installed here: the zip pins the torch the exercises are graded with "
                         "here, so install it first") from None
    return version.split("+", 1)[0]


def reference_checks(exercise: Exercise, weights: dict[str, float], total: float | None) -> tuple[GradedCheck, ...]:
    """The exercise's checks, in order, as its reference's grade reports them, with their points."""
    from quizapp.grading.runner import grade

    report = grade(exercise.reference, exercise, device="cpu")
    if report.status != "pass":
        failing = "; ".join(f"{c.id}: {c.status}" for c in report.checks if c.status != "pass")
        raise BuildError(f"the reference of {exercise.id} does not pass here ({report.status}"
                         f"{': ' + report.message if report.message else ''}{'; ' + failing if failing else ''}), "
                         "so no submission could: not building")
    unknown = sorted(set(weights) - {c.id for c in report.checks})
    if unknown:
        raise BuildError(f"{exercise.id}/exercise.yaml: points names {', '.join(unknown)}, which "
                         f"{'is not a check' if len(unknown) == 1 else 'are not checks'} of the exercise")
    raw = [weights.get(c.id, 1.0) for c in report.checks]
    if not sum(raw) > 0:
        raise BuildError(f"{exercise.id}/exercise.yaml: points give every check 0")
    scale = total / sum(raw) if total is not None else 1.0
    return tuple(GradedCheck(c.id, c.title, w * scale, exercise.questions.get(c.id, ()))
                 for c, w in zip(report.checks, raw))


def question_titles(ids) -> dict[str, str]:
    """Each question id's one-line title, for the "study next" list (the bank is read here, once)."""
    from quizapp.bank.files import pack_files
    from quizapp.bank.load import load_bank
    from quizapp.bank.titles import titles_of
    from quizapp.paths import shipped_questions_dir

    wanted = list(dict.fromkeys(ids))
    bank = load_bank(pack_files([shipped_questions_dir()]))
    known, _ = titles_of(wanted, bank.questions)
    return dict(known)


# ---------------------------------------------------------------------------------------------------
# The wheel


def source_checkout() -> Path | None:
    """The project folder this quizapp runs from, when it is a source checkout (an editable install)."""
    root = Path(quizapp.__file__).resolve().parent.parent
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return root if re.search(r'^name\s*=\s*"quizapp"\s*$', text, re.M) else None


def project_wheel(dest: Path) -> Path:
    source = source_checkout()
    return built_wheel(source, dest) if source is not None else repacked_wheel(dest)


# The project's build backend, called as pip calls it (PEP 517), in the source folder.
HATCHLING_BUILD = "import sys; from hatchling.build import build_wheel; print(build_wheel(sys.argv[1]))"


def built_wheel(source: Path, dest: Path) -> Path:
    """A wheel of the source checkout: by its build backend, hatchling, where this environment has it
    (the test extras do), else by `pip wheel` (whose isolated build downloads hatchling)."""
    if importlib.util.find_spec("hatchling") is not None:
        how, command = "hatchling", [sys.executable, "-c", HATCHLING_BUILD, str(dest)]
    else:
        how, command = "pip wheel", [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                                     "--disable-pip-version-check", "--wheel-dir", str(dest), str(source)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=source, timeout=BUILD_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"could not build the quizapp wheel ({how}): {exc}") from None
    wheels = sorted(dest.glob(f"quizapp-{__version__}-*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
        raise BuildError(f"could not build the quizapp wheel from {source} ({how} exited {done.returncode}):\n{tail}")
    return wheels[0]


def repacked_wheel(dest: Path) -> Path:
    """The installed quizapp (installed from a wheel: no source here) packed again as that wheel: its
    package files and metadata, as its RECORD lists them, with a RECORD of their own."""
    try:
        dist = importlib.metadata.distribution("quizapp")
    except importlib.metadata.PackageNotFoundError:
        raise BuildError("quizapp runs neither from a source checkout nor from an installed wheel: "
                         "no wheel to put in the zip") from None
    if dist.version != __version__ or not dist.files:
        raise BuildError(f"the installed quizapp's metadata ({dist.version}) is not this quizapp ({__version__}): "
                         "reinstall it, or build the zip from a source checkout")
    info = f"quizapp-{__version__}.dist-info"
    skipped = {f"{info}/{name}" for name in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")}
    wheel = dest / f"quizapp-{__version__}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for file in sorted(dist.files, key=str):
            name = file.as_posix()
            if (name.startswith("../") or name in skipped or "__pycache__" in file.parts or name.endswith(".pyc")
                    or not (name.startswith("quizapp/") or name.startswith(f"{info}/"))):
                continue
            data = Path(dist.locate_file(file)).read_bytes()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            zf.writestr(name, data)
            record.append(f"{name},sha256={digest},{len(data)}")
        record.append(f"{info}/RECORD,,")
        zf.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    if not any(line.startswith("quizapp/__init__.py,") for line in record):
        raise BuildError("the installed quizapp's RECORD does not list its own files: no wheel to put in the zip")
    return wheel


# ---------------------------------------------------------------------------------------------------
# The zip


def zip_members(config: AutograderConfig, wheel: Path, torch_version: str) -> dict[str, tuple[bytes, bool]]:
    """name -> (bytes, executable) of every member but the wheel."""
    fill = {"@EXERCISE@": config.exercise, "@TORCH_VERSION@": torch_version, "@TORCH_INDEX@": TORCH_INDEX,
            "@QUIZAPP_VERSION@": __version__, "@WHEEL@": wheel.name}
    setup = (TEMPLATES / "setup.sh").read_text(encoding="utf-8")
    for key, value in fill.items():
        setup = setup.replace(key, value)
    run = (TEMPLATES / "run_autograder").read_text(encoding="utf-8")
    config_text = json.dumps(config.to_json(), indent=2, ensure_ascii=False) + "\n"
    return {"setup.sh": (setup.encode(), True), "run_autograder": (run.encode(), True),
            CONFIG_NAME: (config_text.encode(), False)}


def write_zip(output: Path, members: dict[str, tuple[bytes, bool]], wheel: Path) -> int:
    """Write the zip beside `output`, then move it in place (an old zip is replaced whole or kept);
    its size in bytes."""
    with replacing(output.absolute()) as tmp:
        with zipfile.ZipFile(tmp, "w") as zf:
            for name, (data, executable) in members.items():
                member = zipfile.ZipInfo(name, date_time=ZIP_TIME)
                member.compress_type = zipfile.ZIP_DEFLATED
                member.external_attr = (0o100755 if executable else 0o100644) << 16
                zf.writestr(member, data)
            member = zipfile.ZipInfo(wheel.name, date_time=ZIP_TIME)
            member.external_attr = 0o100644 << 16
            zf.writestr(member, wheel.read_bytes())  # stored: a wheel is compressed already
        os.chmod(tmp, 0o644)
    return output.stat().st_size
