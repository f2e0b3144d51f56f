"""A grade's progress as typed events: what the runner tells its caller while the checks run.

They stay these objects until a front end writes them out: `quizapp grade --events` as JSON lines
(`to_json`), the app as its messages. `read_event` is the way back, for the app reading the JSON
lines of a grader command it started.
"""

from __future__ import annotations

from dataclasses import dataclass

from quizapp.grading.result import CheckResult, GradeReport


@dataclass(frozen=True)
class Started:
    """The solution runs: on what, and the checks it will run, in their order."""

    device: str
    torch: str
    checks: tuple[tuple[str, str], ...]  # (id, title)
    sandbox: str | None = None  # the child's word on its protection

    def to_json(self) -> dict:
        return {"event": "start", "device": self.device, "torch": self.torch,
                "checks": [{"id": cid, "title": title} for cid, title in self.checks], "sandbox": self.sandbox}


@dataclass(frozen=True)
class Checked:
    """One check finished (its curves, if any, in `check.data`)."""

    check: CheckResult

    def to_json(self) -> dict:
        check = self.check
        return {"event": "check", "id": check.id, "title": check.title, "status": check.status,
                "message": check.message, "data": check.data}


@dataclass(frozen=True)
class Stopped:
    """The run stopped on an error before its checks were done (the report follows and says why)."""

    message: str

    def to_json(self) -> dict:
        return {"event": "error", "message": self.message}


@dataclass(frozen=True)
class Reported:
    """The grade's report: the last event of `quizapp grade --events`."""

    report: GradeReport

    def to_json(self) -> dict:
        return {"event": "report", "report": self.report.to_json()}


GradeEvent = Started | Checked | Stopped | Reported


def read_event(event: dict) -> GradeEvent | None:
    """The event one JSON line of `grade --events` holds, read defensively (it comes from another
    process); None for a kind this side does not know."""
    kind = event.get("event")
    if kind == "start":
        checks = tuple((str(c.get("id", "")), str(c.get("title", c.get("id", ""))))
                       for c in event.get("checks") or () if isinstance(c, dict))
        sandbox = event.get("sandbox")
        return Started(str(event.get("device") or "?"), str(event.get("torch") or "?"), checks,
                       sandbox if isinstance(sandbox, str) else None)
    if kind == "check":
        return Checked(CheckResult.from_json(event))
    if kind == "error" and isinstance(event.get("message"), str):
        return Stopped(event["message"])
    if kind == "report" and isinstance(event.get("report"), dict):
        return Reported(GradeReport.from_json(event["report"]))
    return None
