"""Shared by the TUI tests: the test data, the fixed clock, and small Pilot helpers."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from textual import events
from textual.worker import WorkerCancelled

from quizapp.bank import Bank, load_bank, pack_files

DATA = Path(__file__).parent / "data"
FAKE_GRADER = Path(__file__).parent / "fake_grader.py"
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
SIZE = (100, 32)
SMALL = (80, 24)


async def settle(pilot) -> None:
    """Let workers finish and the screen catch up.

    A finished worker leaves a chain of messages behind (each check, the report, the worker's
    state change, then layout and plots); on a loaded machine one pause does not drain it.
    A cancelled worker counts as finished: the cancel tests make them, and wait() raises for them
    when the cancel lands before this call. A worker that failed still raises.
    """
    for worker in list(pilot.app.workers):
        try:
            await worker.wait()
        except WorkerCancelled:
            pass
    for _ in range(5):
        await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


KEY_CHARACTERS = {"enter": "\r", "escape": "\x1b"}


async def type_ahead(pilot, *keys: str) -> None:
    """Queue every key before any is handled, as a fast typist or a paste delivers them (Pilot's
    press waits for each key to be handled before it sends the next), then let them be handled."""
    for key in keys:
        pilot.app.post_message(events.Key(key, KEY_CHARACTERS.get(key, key if len(key) == 1 else None)))
    await pilot.pause()
    await pilot.pause()


def pack_bank() -> Bank:
    """The test pack: two small topics, every question type."""
    return load_bank(pack_files([DATA / "questions"]))
