"""Requests a screen sends up to the App, which decides what to open."""

from __future__ import annotations

from textual.message import Message


class StudyRequested(Message):
    """Start a quiz: a topic's questions, or the review queue when `topic` is None."""

    def __init__(self, topic: str | None = None) -> None:
        super().__init__()
        self.topic = topic


class ExerciseRequested(Message):
    """Open one exercise's screen."""

    def __init__(self, exercise_id: str) -> None:
        super().__init__()
        self.exercise_id = exercise_id
