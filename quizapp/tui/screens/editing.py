"""Opening a solution file for editing, the same way from every screen that has one (an exercise,
an interview's exercise): in the app's own editor, or in $VISUAL / $EDITOR with the app suspended."""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

from textual.app import SuspendNotSupported
from textual.screen import Screen


def edit_here(screen: Screen, path: Path, label: str, done: Callable[[bool | None], object] | None = None) -> None:
    """Push the in-app editor on `path`; `done(saved)` runs when it closes."""
    from quizapp.tui.screens.editor import EditorScreen

    try:
        editor = EditorScreen(path, label)
    except (OSError, UnicodeDecodeError) as exc:
        screen.notify(f"Could not read {label}: {exc}", severity="error")
        return
    screen.app.push_screen(editor, done)


def edit_outside(screen: Screen, path: Path, *, here_key: str) -> None:
    """Hand the terminal to $VISUAL or $EDITOR on `path` until it exits; `here_key` edits in the app instead."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        screen.notify(f"Set $EDITOR (for example `export EDITOR=nano`), or press {here_key} to edit here.",
                      title="No editor set", severity="warning")
        return
    try:
        with screen.app.suspend():
            subprocess.run([*shlex.split(editor), str(path)], check=False)
    except SuspendNotSupported:
        screen.notify(f"This terminal cannot hand over to an editor; press {here_key} to edit here.",
                      severity="warning")
    except OSError as exc:
        screen.notify(f"Could not run {editor}: {exc.strerror or exc}", severity="error")
