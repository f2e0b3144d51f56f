"""Opening the TUI from the command line."""

from __future__ import annotations


def launch() -> int:
    """Run the app until the learner quits; its exit code becomes the command's."""
    from quizapp.tui.app import QuizApp

    app = QuizApp()
    app.run()
    return app.return_code or 0
