"""The grades the collected tests of this folder read, graded once, before the first test runs.

A test module here may define `up_front(items)`: given its collected items, the grades they will read,
as gradeutil's (way, args) pairs. Gathered from every module and graded in one pool, they keep both
workers busy from the first grade to the last (a fixture per module left one idle at the end of each
module's batch, 27 times over), and a file several modules read is graded once. A test reads its
grade from gradeutil's cache; one that is missing (a grade that raised here) is graded by the test,
which then shows the error.
"""

from __future__ import annotations

import time

from gradeutil import grade_jobs
from warmutil import close as close_warm_grader


def pytest_collection_finish(session) -> None:
    if session.config.option.collectonly or not session.items:
        return
    jobs, seen = [], set()
    for item in session.items:
        module = getattr(item, "module", None)
        if module is None or not hasattr(module, "up_front") or module in seen:
            continue
        seen.add(module)
        jobs += module.up_front([i for i in session.items if getattr(i, "module", None) is module])
    if not jobs:
        return
    jobs = list(dict.fromkeys(jobs))
    # Cold grades first: each starts an interpreter and imports torch, the longest to run; the warm
    # ones, a second or two each, then even out the two workers' ends.
    jobs.sort(key=lambda job: job[0] != "cold")
    started = time.monotonic()
    grade_jobs(jobs, keep_going=True)
    # The zygote keeps the writable folders it started with, and the session's own (tests/conftest.py's
    # QUIZAPP_GRADE_WRITABLE, for the solutions tests write into tmp_path) is set only when the first
    # test starts: the tests get a zygote of their own, started then.
    close_warm_grader()
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"tests/grader: {len(jobs)} grades up front in {time.monotonic() - started:.0f} s")
