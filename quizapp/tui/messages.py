"""Requests a screen sends up to the App, which decides what to open."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class StudyRequested(Message):
    """Start a quiz: a topic's questions, or the review queue when `topic` is None."""

    topic: str | None = None


@dataclass
class ExerciseRequested(Message):
    exercise_id: str
