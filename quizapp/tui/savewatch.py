"""Regrade on save in the app: a thread per watched file that posts `FileSaved` to whoever watches it
(the grade panel)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from textual.message import Message
from textual.message_pump import MessagePump

from quizapp.grading.saves import watch_saves


@dataclass
class FileSaved(Message):
    path: Path


class SaveWatcher:
    """Watches one file at a time for `owner`. A thread, not a worker: it lives as long as its owner,
    and workers are what finishes."""

    def __init__(self, owner: MessagePump) -> None:
        self.owner = owner
        self.watched: Path | None = None
        self._stop: threading.Event | None = None

    def watch(self, path: Path) -> None:
        """Watch `path` (again only when it changed); a folder that does not exist is not watched."""
        if path == self.watched or not path.parent.is_dir():
            return
        self.stop()
        self.watched, self._stop = path, threading.Event()

        def saved(error: Exception | None) -> None:
            # A watch that failed (the folder went away) just ends: saves are no longer seen, grading still works.
            if error is None:
                self.owner.post_message(FileSaved(path))

        threading.Thread(target=watch_saves, args=(path, saved, self._stop), daemon=True,
                         name=f"watch {path.name}").start()

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self._stop = None
        self.watched = None
