"""Opening the TUI from the command line."""

from __future__ import annotations

import gc


def launch() -> int:
    """Run the app until the learner quits; its exit code becomes the command's."""
    # The cyclic collector is paused from here, before Textual is imported: importing it alone runs
    # the collector about 80 times (15-20 ms on a slow machine) over objects that live until exit.
    # The app turns it back on once its first screen is up (QuizApp.run and _settle_gc).
    collecting = gc.isenabled()
    gc.disable()
    try:
        from quizapp.tui.app import QuizApp

        app = QuizApp(resume_gc=collecting)
        app.run()
    finally:
        if collecting:
            gc.enable()
    return app.return_code or 0
