"""The parent's reading of the child's events: announced checks that never report are never a
pass, and an event that is not well formed voids the run (only the child writes the channel)."""

from __future__ import annotations

from pathlib import Path

import pytest

from quizapp.grading.runner import Tampered, _RunState

START = {"event": "start", "device": "cpu", "torch": "x",
         "checks": [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}, {"id": "c", "title": "C"}]}


def check(cid: str, status: str = "pass") -> dict:
    return {"event": "check", "id": cid, "title": cid.upper(), "status": status, "message": "", "data": {}}


def report_of(*events):
    state = _RunState("ex", Path("s.py"), None)
    state.feed(list(events))
    return state.report(0.0, None if state.done else "cut short", "")


def test_all_checks_reported_passes():
    assert report_of(START, check("a"), check("b"), check("c"), {"event": "done"}).status == "pass"


def test_a_check_that_never_reported_is_never_a_pass():
    report = report_of(START, check("a"), check("b"), {"event": "error", "message": "internal grader error: X"},
                       {"event": "done"})
    assert report.status == "error"
    assert [(c.id, c.status) for c in report.checks] == [("a", "pass"), ("b", "pass"), ("c", "error")]
    assert report.checks[2].message == "internal grader error: X"


def test_checks_after_a_crash_did_not_run():
    report = report_of(START, check("a"))
    assert [c.status for c in report.checks] == ["pass", "error", "error"]
    assert report.checks[1].message == "cut short"
    assert report.checks[2].message.startswith("did not run")


@pytest.mark.parametrize("bad", [[1, 2], {"event": "check", "id": "a"}, check("a", "bogus"), "text"])
def test_a_malformed_event_is_refused(bad):
    with pytest.raises(Tampered, match="malformed"):
        report_of(START, bad, check("a"), check("b"), check("c"), {"event": "done"})
