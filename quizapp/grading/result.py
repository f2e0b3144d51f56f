"""Grade results as data. Rendering (rich, JSON, TUI) lives elsewhere."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SCHEMA = 1
CHECK_STATUSES = ("pass", "fail", "error", "skip")
MESSAGE_CAP = 4000  # characters of one message kept (in JSON, in the store, on screen)
SHOWN_CAP = MESSAGE_CAP + 100  # what the parent keeps: a cut message and the child's note of the cut
# Characters a terminal acts on instead of showing: C0 controls but newline and tab, DEL, C1
# controls (0x9b is an 8-bit CSI), lone surrogates (unprintable), and the bidirectional overrides
# and isolates that reorder what is shown.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` with every character a terminal would act on shown escaped (ESC as \\x1b): what a
    solution prints or raises can never clear a screen, move the cursor or paint a fake result."""
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], text)


def capped(text: str, limit: int = MESSAGE_CAP) -> str:
    """`text` cut to `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (cut: {len(text) - limit} more characters)"


def shown_text(text, limit: int = SHOWN_CAP) -> str:
    """A message from the child as every report keeps it: capped, with control characters escaped."""
    return printable(capped(str(text), limit))


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
    sandbox: str | None = None  # the protection the solution ran under, in words (None: it never ran)

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
            "sandbox": self.sandbox,
        }

    @property
    def exit_code(self) -> int:
        return 0 if self.status == "pass" else 1


def overall_status(checks: list[CheckResult]) -> str:
    """pass only when no check failed or errored and at least one passed: skips never add up to a pass."""
    if any(c.status in ("fail", "error") for c in checks) or not any(c.status == "pass" for c in checks):
        return "fail"
    return "pass"


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
        message = printable(check.message or "")
        if check.status in ("fail", "error") and message and not message.startswith(NOT_RUN):
            key = (check.status, _without_inputs(message) if check.status == "error" else message)
            if key in first:
                message = f"same {'error' if check.status == 'error' else 'failure'} as \"{first[key]}\""
            else:
                first[key] = check.title
        shown.append(message)
    return shown
