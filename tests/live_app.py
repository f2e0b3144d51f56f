"""A live quizapp app in a child process, driven line by line on stdin: the concurrency tests' long-lived writer.

It runs the real QuizApp (headless) on the test pack and writes through the app's own study context,
as its screens do. Commands, one per line; each is answered with one JSON line on stdout:

    answer QID RATING   record a review of QID through the context (as the quiz screen does)
    grade EXERCISE      record a finished grade through the app's grade recorder (as the exercise screen does)
    reopen              open and close the store again in this process (as every grade once did)
    count               {"answers": n, "grades": n} as this app's connection sees them
    quit                leave the app
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "tui"))

from tuihelp import pack_bank  # noqa: E402

from quizapp.grading.record import record_grade  # noqa: E402
from quizapp.grading.result import CheckResult, GradeReport  # noqa: E402
from quizapp.study.store import Store  # noqa: E402
from quizapp.tui.app import QuizApp  # noqa: E402


def say(**fields) -> None:
    print(json.dumps(fields), flush=True)


async def serve(app: QuizApp) -> None:
    loop = asyncio.get_running_loop()
    context = app.context
    say(ready=True)
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        command, *args = line.split()
        if command == "answer":
            question = context.bank.questions[args[0]]
            context.record(question, rating=int(args[1]), correct=int(args[1]) > 1, response=None, duration_ms=1000)
            say(ok=True)
        elif command == "grade":
            report = GradeReport(exercise=args[0], file="live.py", status="pass", message=None, device="cpu",
                                 torch="test", duration_s=0.1, checks=[CheckResult("c", "c", "pass")])
            say(ok=record_grade(report, Path("live.py"), context.store) is None)
        elif command == "reopen":
            Store.open().close()
            say(ok=True)
        elif command == "count":
            say(answers=context.store.answer_count(), grades=len(context.store.grades()))
        elif command == "quit":
            break


async def main() -> None:
    app = QuizApp(bank=pack_bank(), work_dir=Path.cwd())
    async with app.run_test(size=(100, 32)):
        await serve(app)
    say(closed=True)


if __name__ == "__main__":
    asyncio.run(main())
