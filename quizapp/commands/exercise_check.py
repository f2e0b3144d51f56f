"""`quizapp exercises check [ID...]`: validate every exercise (or the ones named), as a maintainer
or an author of a new exercise would before shipping it: metadata, files, the reference passes,
the starter fails cleanly; in a source checkout, every buggy solution holds its header and every
check is failed by one of them. Exit 0 when every exercise is whole, 1 otherwise."""

from __future__ import annotations

from pathlib import Path

import click

from quizapp.commands.common import fail
from quizapp.grading.result import GradeReport
from quizapp.grading.selfcheck import check_exercise


def check_exercises(ids: tuple[str, ...], device: str, root: Path | None = None, buggy: bool = True) -> int:
    from quizapp import paths
    from quizapp.bank.cache import load_outline_cached
    from quizapp.catalog import Exercise
    from quizapp.grading.runner import grade
    from quizapp.grading.warm import WarmGrader

    root = root or paths.shipped_exercises_dir()
    folders = sorted(p.parent for p in root.glob("*/exercise.yaml")) if root.is_dir() else []
    known = {f.name: f for f in folders}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise click.UsageError(f"unknown exercise {', '.join(unknown)} (known: {', '.join(known)})")
    chosen = [known[i] for i in ids] if ids else folders
    if not chosen:
        return fail(f"no exercises found in {root}")
    outline = load_outline_cached()[0]
    topics, question_ids = outline.topics, outline.topic_of()
    warm = WarmGrader()  # one zygote for every grade: torch is imported once

    def grade_one(file, folder, exercise_id, on_device=None) -> GradeReport:
        # `on_device`: the device a buggy solution's header asks for, over the command's own
        return grade(file, Exercise(exercise_id, exercise_id, "", 0, "", (), folder), device=on_device or device, warm=warm)

    broken = 0
    try:
        for folder in chosen:
            result = check_exercise(folder, topics, grade_one, question_ids, buggy=buggy)
            if result.ok:
                ref, starter = result.reference, result.starter
                held = "" if result.buggy is None else f", {result.buggy} buggy solutions hold their headers"
                click.echo(f"ok    {result.id}: reference passes {ref.passed}/{ref.counted} ({ref.duration_s:.1f} s), "
                           f"starter fails cleanly ({starter.passed}/{starter.counted} pass){held}")
                continue
            broken += 1
            click.echo(click.style(f"FAIL  {result.id}", fg="red", bold=True))
            for problem in result.problems:
                click.echo(f"      - {problem}")
    finally:
        warm.close()
    total = len(chosen)
    if broken:
        click.echo(f"{broken} of {total} exercises need work.")
        return 1
    click.echo(f"All {total} exercises are whole.")
    return 0
