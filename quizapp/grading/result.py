"""Grade results as data. Rendering (rich, JSON, TUI) lives elsewhere."""

from __future__ import annotations

from dataclasses import dataclass, field

SCHEMA = 1
CHECK_STATUSES = ("pass", "fail", "error", "skip")


@dataclass
class CheckResult:
    id: str
    title: str
    status: str  # pass | fail | error | skip
    message: str = ""
    data: dict = field(default_factory=dict)  # e.g. curves for a plot; not part of --json

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "status": self.status, "message": self.message}


@dataclass
class GradeReport:
    exercise: str
    file: str
    status: str  # pass | fail | error
    message: str | None
    device: str | None
    torch: str | None
    duration_s: float
    checks: list[CheckResult] = field(default_factory=list)
    output: str = ""  # what the solution printed (capped)

    @property
    def passed(self) -> int:
        return sum(1 for c in self.checks if c.status == "pass")

    @property
    def counted(self) -> int:
        """Checks that count toward the result: skipped ones do not."""
        return sum(1 for c in self.checks if c.status != "skip")

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA, "exercise": self.exercise, "file": self.file, "status": self.status,
            "message": self.message, "device": self.device, "torch": self.torch,
            "duration_s": round(self.duration_s, 2), "checks": [c.to_json() for c in self.checks],
        }

    @property
    def exit_code(self) -> int:
        return 0 if self.status == "pass" else 1


def overall_status(checks: list[CheckResult]) -> str:
    return "fail" if any(c.status in ("fail", "error") for c in checks) else "pass"


NOT_RUN = "did not run"  # how the runner words a check that a dead run never reached


def _without_inputs(message: str) -> str:
    """An error message without the 'with INPUTS: ' its check put in front (harness.error_inputs): the
    same error under other inputs is the same error."""
    if message.startswith("with ") and ": " in message:
        return message.split(": ", 1)[1]
    return message


def shown_messages(checks) -> list[str]:
    """Each check's message as a report shows it (`checks`: anything with title, status and message).

    A failure or error that an earlier row already told, word for word or as the same error under
    other inputs, points at that row instead of repeating it: a loop that dies the same way in every
    check reads as one problem, not fourteen. Rows the run never reached keep their short note.
    """
    first: dict[tuple[str, str], str] = {}
    shown = []
    for check in checks:
        message = check.message or ""
        if check.status in ("fail", "error") and message and not message.startswith(NOT_RUN):
            key = (check.status, _without_inputs(message) if check.status == "error" else message)
            if key in first:
                message = f"same {'error' if check.status == 'error' else 'failure'} as \"{first[key]}\""
            else:
                first[key] = check.title
        shown.append(message)
    return shown
