"""`quizapp bench`: time the learner's amp_training loop against float32 on a GPU.

The measuring needs torch, which the command line never imports: it runs in a child process
(`python -m quizapp.bench`, which also loads the learner's file), whose output goes straight to the
terminal and whose exit code is passed on (0 measured, 1 the loop failed, 2 misuse: no CUDA, say).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import click

from quizapp.catalog import load_catalog
from quizapp.grading.processes import child_env
from quizapp.grading.resolve import marker_exercise

BENCHED = "amp_training"


def bench_file(file: Path, exercise: str | None, options: list[str]) -> int:
    if not file.exists():
        return usage(f"no such file: {file}")
    if file.is_dir():
        return usage(f"{file} is a folder; give the solution's .py file")
    try:
        chosen = exercise or marker_exercise(file) or BENCHED
    except OSError as exc:
        return usage(f"cannot read {file}: {exc.strerror}")
    if chosen != BENCHED:
        known = load_catalog()
        if chosen not in known:
            return usage(f"unknown exercise '{chosen}' (known: {', '.join(sorted(known))})")
        return usage(f"the bench times training loops of the '{BENCHED}' exercise; {file} is '{chosen}'")
    with tempfile.TemporaryDirectory(prefix="quizapp-bench-") as work:
        command = [sys.executable, "-m", "quizapp.bench", str(file), *options, "--work-dir", work]
        try:
            done = subprocess.run(command, env=child_env())
        except KeyboardInterrupt:
            click.echo("quizapp bench: cancelled", err=True)
            return 130
    if done.returncode < 0:
        click.echo(f"quizapp bench: the bench process was stopped by signal {-done.returncode}", err=True)
        return 1
    return done.returncode


def usage(message: str) -> int:
    click.echo(f"quizapp bench: {message}", err=True)
    return 2
