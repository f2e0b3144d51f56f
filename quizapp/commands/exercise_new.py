"""`quizapp exercises new ID`: the folder a new exercise needs, every file in place.

Writes exercises/<ID>/ (exercise.yaml, starter.py, reference.py, checks.py) and, beside the exercises
folder of a source checkout, tests/grader/buggy/<ID>/ with a buggy solution, the solution that does
nothing (every exercise has one), and the starter's expectations. The example they hold is small and whole: `quizapp exercises check ID` grades it at
once, and lists what is left to write (every `TODO(author)`, the topic, the questions of each check).
The files come from exercise_template/ beside this module.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from quizapp.grading.selfcheck import PLACEHOLDER

TEMPLATES = Path(__file__).resolve().parent / "exercise_template"
# An exercise id is its folder's name and the marker's value (`# quizapp: exercise=ID`): lower case
# words joined by single underscores, as every shipped id is.
ID_RULE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
# template -> (the folder it goes to: the exercise's own, or its buggy solutions'; the file's name)
FILES = {
    "exercise.yaml.tmpl": ("exercise", "exercise.yaml"),
    "starter.py.tmpl": ("exercise", "starter.py"),
    "reference.py.tmpl": ("exercise", "reference.py"),
    "checks.py.tmpl": ("exercise", "checks.py"),
    "returns_sum.py.tmpl": ("buggy", "returns_sum.py"),
    "does_nothing.py.tmpl": ("buggy", "does_nothing.py"),
    "starter.expect.tmpl": ("buggy", "starter.expect"),
}


def id_problem(exercise_id: str) -> str | None:
    """Why `exercise_id` cannot name a new exercise, or None."""
    from quizapp.catalog import DRILL_PREFIX

    if not ID_RULE.match(exercise_id):
        return (f"{exercise_id!r} is not an exercise id: lower-case letters and digits in words joined by "
                "single underscores, starting with a letter (e.g. grad_clipping)")
    if exercise_id.startswith(DRILL_PREFIX):
        return (f"ids starting with {DRILL_PREFIX!r} are debugging drills, whose starter is a whole broken "
                "script and whose checks come from quizapp.checking.drill: copy a drill's folder instead")
    return None


def _yaml_text(value: str) -> str:
    """`value` as one YAML scalar (a JSON string is one), so that a colon or a quote stays text."""
    import json

    return json.dumps(value, ensure_ascii=False)


def new_exercise(exercise_id: str, title: str | None, topic: str | None, root: Path | None) -> int:
    """Write the new exercise's files; 0 when written. A bad or taken id, or an unknown topic, is a
    usage error (exit code 2)."""
    from quizapp import paths
    from quizapp.grading.mutants import buggy_root

    exercises = (root or paths.shipped_exercises_dir()).resolve()
    problem = id_problem(exercise_id)
    if problem:
        raise click.UsageError(problem)
    if root is None and Path(paths.__file__).resolve().parent / "_data" in exercises.parents:
        # an installed quizapp: its exercises are package data, with no tests beside them
        raise click.UsageError(f"{exercises} is an installed copy of the exercises: give a checkout's exercises "
                               "folder with --root")
    if not exercises.is_dir():
        raise click.UsageError(f"no exercises folder at {exercises}")
    if topic is not None:
        from quizapp.bank.cache import load_outline_cached

        topics = load_outline_cached()[0].topics
        if topic not in topics:
            raise click.UsageError(f"unknown topic {topic!r}; the bank's topics: {', '.join(sorted(topics))}")
    folders = {"exercise": exercises / exercise_id, "buggy": buggy_root(exercises) / exercise_id}
    targets = {name: folders[where] / file_name for name, (where, file_name) in FILES.items()}
    taken = sorted({p.parent for p in targets.values() if p.parent.exists()})
    if taken:
        raise click.UsageError(f"exercise {exercise_id} exists already: {', '.join(str(p) for p in taken)}")
    values = {
        "id": exercise_id,
        "title": _yaml_text(title if title else f"{PLACEHOLDER}: the exercise's title"),
        "topic": topic if topic else _yaml_text(f"{PLACEHOLDER}: a topic of the question bank (quizapp list)"),
    }
    for name, target in targets.items():
        text = (TEMPLATES / name).read_text(encoding="utf-8")
        for key, value in values.items():
            text = text.replace("{{" + key + "}}", value)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    shown = sorted({t.parent for t in targets.values()})
    click.echo(f"Wrote exercise {exercise_id}:")
    for folder in shown:
        click.echo(f"  {folder}/: {', '.join(sorted(t.name for t in targets.values() if t.parent == folder))}")
    click.echo(f"Next: replace every {PLACEHOLDER} and the mean_loss example (CONTRIBUTING.md, \"Adding an "
               f"exercise\"), then run: quizapp exercises check {exercise_id}")
    return 0
