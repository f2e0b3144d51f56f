"""Grade results as data. Rendering (rich, JSON, TUI) lives elsewhere."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, get_args

from quizapp.checking.protocol import MESSAGE_CAP, capped

SCHEMA = 1
# A check's outcome, and a grade's ("usage": the grader could not run the file at all; never in a
# report a check produced, and exit code 2 on the command line).
CheckStatus = Literal["pass", "fail", "error", "skip"]
GradeStatus = Literal["pass", "fail", "error", "usage"]
CHECK_STATUSES: tuple[str, ...] = get_args(CheckStatus)
GRADE_STATUSES: tuple[str, ...] = get_args(GradeStatus)
SHOWN_CAP = MESSAGE_CAP + 100  # what the parent keeps: a cut message and the child's note of the cut
# Characters a terminal acts on instead of showing: C0 controls but newline and tab, DEL, C1
# controls (0x9b is an 8-bit CSI), lone surrogates (unprintable), and the bidirectional overrides
# and isolates that reorder what is shown.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` with every character a terminal would act on shown escaped (ESC as \\x1b): what a
    solution prints or raises can never clear a screen, move the cursor or paint a fake result."""
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], text)


def shown_text(text, limit: int = SHOWN_CAP) -> str:
    """A message from the child as every report keeps it: control characters escaped, then capped (in
    that order: an escape is four characters, and a message of them must not pass the cap four times over)."""
    return capped(printable(str(text)), limit)


@dataclass(frozen=True)
class CheckResult:
    id: str
    title: str
    status: CheckStatus
    message: str = ""
    data: dict = field(default_factory=dict)  # e.g. curves for a plot; not part of --json

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "status": self.status, "message": self.message}

    @classmethod
    def from_json(cls, item: dict) -> CheckResult:
        """A check as a report or an event carries it, read defensively: a missing or unknown
        status reads as error, a missing title as the id."""
        status = item.get("status")
        data = item.get("data")
        cid = str(item.get("id", ""))
        return cls(id=cid, title=str(item.get("title") or cid),
                   status=status if status in CHECK_STATUSES else "error",
                   message=str(item.get("message") or ""), data=data if isinstance(data, dict) else {})

    @property
    def curves(self) -> dict | None:
        """The check's plot, when its data holds a well-formed one."""
        curves = self.data.get("curves")
        return curves if isinstance(curves, dict) and isinstance(curves.get("series"), dict) else None


@dataclass
class GradeReport:
    exercise: str
    file: str
    status: GradeStatus
    message: str | None
    device: str | None
    torch: str | None
    duration_s: float
    checks: list[CheckResult] = field(default_factory=list)
    output: str = ""  # what the solution printed (capped)
    sandbox: str | None = None  # the protection the solution ran under, in words (None: it never ran)
    review: list[str] = field(default_factory=list)  # question ids the failed checks rest on, to review now

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
            "sandbox": self.sandbox, "review": list(self.review),
        }

    @classmethod
    def from_json(cls, data: dict) -> GradeReport:
        """A schema-1 report (`grade --json`, a `report` event) as the type the grader made it from."""
        status = data.get("status")
        duration = data.get("duration_s")
        return cls(exercise=str(data.get("exercise") or ""), file=str(data.get("file") or ""),
                   status=status if status in GRADE_STATUSES else "error",
                   message=None if data.get("message") is None else str(data["message"]),
                   device=None if data.get("device") is None else str(data["device"]),
                   torch=None if data.get("torch") is None else str(data["torch"]),
                   duration_s=float(duration) if isinstance(duration, (int, float)) else 0.0,
                   checks=[CheckResult.from_json(c) for c in data.get("checks") or () if isinstance(c, dict)],
                   sandbox=None if data.get("sandbox") is None else str(data["sandbox"]),
                   review=[str(q) for q in data.get("review") or () if isinstance(q, str)])

    @property
    def exit_code(self) -> int:
        return 0 if self.status == "pass" else 1


def review_of(checks: list[CheckResult], links) -> list[str]:
    """The question ids that the failed checks rest on (`links`: check id -> question ids), each once,
    in the order of the checks. Only failures count: an error is a crash (the starter's
    NotImplementedError, an import that fails), which says nothing about what the learner knows."""
    out: dict[str, None] = {}
    for check in checks:
        if check.status == "fail":
            out.update(dict.fromkeys(links.get(check.id, ())))
    return list(out)


def overall_status(checks: list[CheckResult]) -> GradeStatus:
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
