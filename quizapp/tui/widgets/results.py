"""A grade's results: a status line, a table of checks filled in as they finish with every message
in full (wrapped; a message an earlier row told already points at that row), the questions the failed
checks rest on ("review these"), the highlighted check's curves against the reference when it has any.

The checks that failed come first, each group in the order the exercise defines them: on a small
terminal the failure the learner has to read is under the status line, not below the fold."""

from __future__ import annotations

from rich.text import Text
from textual import events, on
from textual.containers import VerticalGroup
from textual.widgets import DataTable, Static

from quizapp.grading.result import NOT_RUN, CheckResult, GradeReport, shown_messages
from quizapp.tui.widgets.charts import CurvePlot
from quizapp.tui.widgets.panetable import PaneTable

STATUS_WIDTH = 9
STATUS = {
    "pass": ("✔ pass", "bold green"),
    "fail": ("✘ fail", "bold red"),
    "error": ("! error", "bold red"),
    "skip": ("- skip", "dim"),
    "usage": ("! not run", "bold red"),
    "waiting": ("… waiting", "dim"),
    "not run": ("- not run", "dim"),
}


FAILED = ("fail", "error")  # the checks listed first


def status_text(status: str) -> Text:
    label, style = STATUS.get(status, (status, ""))
    return Text(label, style=style)


class ChecksTable(PaneTable):
    """The checks, in the results pane: Home and End go to the pane's first and last line (the status
    line above the table, the curves below it) as well as to the first and the last check."""

    def action_scroll_top(self) -> None:
        super().action_scroll_top()
        self.scroll_pane_to(0)

    def action_scroll_bottom(self) -> None:
        super().action_scroll_bottom()
        if self.pane is not None:
            self.scroll_pane_to(round(self.pane.max_scroll_y))


class GradeResults(VerticalGroup):
    DEFAULT_CSS = """
    GradeResults { height: auto; }
    GradeResults > #grade-status { padding: 0 1 1 1; }
    GradeResults > DataTable { height: auto; }
    GradeResults > #grade-review { padding: 1 1 0 1; display: none; }
    GradeResults > #grade-review.-shown { display: block; }
    GradeResults > CurvePlot { display: none; }
    GradeResults > CurvePlot.-shown { display: block; }
    """

    IDLE = "Not graded in this session yet. Press g to grade your file."

    def __init__(self, *, idle: str | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.idle = idle or self.IDLE  # the status line before the first grade
        self.checks: dict[str, CheckResult] = {}
        self.planned: list[tuple[str, str]] = []  # (id, title) in the order the checks are defined
        self.not_run = False  # the grade was cancelled or failed: checks without a result did not run

    def compose(self):
        yield Static(self.idle, id="grade-status")
        yield ChecksTable(cursor_type="row", zebra_stripes=True, id="checks")
        yield Static(id="grade-review")
        yield CurvePlot(id="curves")

    def on_mount(self) -> None:
        self._rebuild()

    def on_resize(self, event: events.Resize) -> None:
        self._rebuild()  # the message column takes the width that is left: wrap again

    def _widths(self) -> tuple[int, int]:
        """The check and message columns' widths: titles in full up to a third of the width, the
        messages in the rest (each column also takes 2 cells of padding)."""
        width = self.size.width or self.app.size.width
        longest = max((len(title) for _, title in self.planned), default=10)
        check = max(10, min(longest, width // 3))
        return check, max(20, width - STATUS_WIDTH - check - 3 * 2 - 2)

    def _rebuild(self) -> None:
        """Lay the table out again: a row's height follows its wrapped message, and DataTable works a
        row's height out only when the row is added, so a changed message means rows added anew."""
        table = self.table
        keep = self._highlighted()
        check_width, message_width = self._widths()
        table.clear(columns=True)
        table.add_column("result", key="status", width=STATUS_WIDTH)
        table.add_column("check", key="check", width=check_width)
        table.add_column("message", key="message", width=message_width)
        done = [self.checks[key] for key, _ in self.planned if key in self.checks]
        shown = dict(zip((c.id for c in done), shown_messages(done)))
        rows = []
        for key, title in self.planned:
            check = self.checks.get(key)
            status = check.status if check else ("not run" if self.not_run else "waiting")
            message = shown.get(key, "")
            if status == "error" and message.startswith(NOT_RUN):  # the run ended before this check
                status, message = "not run", ""
            rows.append((key, title, status, message))
        # Failures first; the sort is stable, so each group keeps the defined order (and a message that
        # points at an earlier failure still points upwards).
        rows.sort(key=lambda row: row[2] not in FAILED)
        for key, title, status, message in rows:
            table.add_row(status_text(status), Text(title), Text(message), key=key, height=None)
        if keep is not None and keep in table.rows:
            table.move_cursor(row=table.get_row_index(keep), animate=False)

    @property
    def table(self) -> ChecksTable:
        return self.query_one("#checks", ChecksTable)

    def set_status(self, text: Text | str) -> None:
        self.query_one("#grade-status", Static).update(text)

    def begin(self, file_label: str) -> None:
        self.checks.clear()
        self.planned = []
        self.not_run = False
        self._rebuild()
        self.set_status(Text(f"Grading {file_label} … (x cancels)", style="bold"))
        self.show_review([], [])
        self._show_curves(None)
        self.table.focus()

    def started(self, device: str, torch: str, checks: list[tuple[str, str]]) -> None:
        self.set_status(Text(f"Grading on {device} (torch {torch}) … (x cancels)", style="bold"))
        known = {key for key, _ in self.planned}
        self.planned += [(key, title) for key, title in checks if key not in known]
        self._rebuild()

    def check_done(self, check: CheckResult) -> None:
        self.checks[check.id] = check
        if check.id in dict(self.planned):
            self.planned = [(key, check.title if key == check.id else title) for key, title in self.planned]
        else:
            self.planned.append((check.id, check.title))
        self._rebuild()
        self._show_curves(self.checks.get(self._highlighted() or ""))

    def finished(self, report: GradeReport) -> None:
        for check in report.checks:
            if check.id not in self.checks:
                self.check_done(check)
        counted = [c for c in self.checks.values() if c.status != "skip"]
        passed = sum(1 for c in counted if c.status == "pass")
        line = status_text(report.status)
        line.append(f"  {passed}/{len(counted)} checks passed")
        details = [report.device] if report.device else []
        details.append(f"{report.duration_s:.1f} s")
        line.append("  (" + ", ".join(details) + ")", style="dim")
        if report.message:
            line.append(f"\n{report.message}")
        if report.sandbox:  # which protection the solution ran under
            line.append(f"\n{report.sandbox[:1].upper()}{report.sandbox[1:]}", style="dim")
        self.set_status(line)
        # Go to the first check that did not pass (the first row): its message is what the learner wants
        # to read, under the status line.
        table = self.table
        if any(check.status in FAILED for check in self.checks.values()):
            table.move_cursor(row=0, scroll=False)
        table.call_after_refresh(table.show_cursor_row, with_top=True)
        self._show_curves(self.checks.get(self._highlighted() or ""))

    def show_review(self, questions: list[tuple[str, str]], missing: list[str]) -> None:
        """The questions the failed checks rest on, as (id, title), and the ids the bank lacks; nothing
        when both are empty. They are due now and start the next review session."""
        review = self.query_one("#grade-review", Static)
        review.set_class(bool(questions or missing), "-shown")
        text = Text()
        if questions:
            text.append("Review these", style="bold").append(" (due now, first in your next review):")
            for qid, title in questions:
                text.append("\n  • ").append(title).append(f"  ({qid})", style="dim")
        if missing:
            text.append("\n" if questions else "")
            text.append(f"Not in your question bank, skipped: {', '.join(missing)}", style="dim")
        review.update(text)

    def failed(self, reason: str) -> None:
        line = status_text("error")
        line.append(f"  {reason}")
        self.set_status(line)
        self._not_run()

    def cancelled(self) -> None:
        self.set_status(Text("Grading cancelled; the grader was stopped.", style="yellow"))
        self._not_run()

    def _not_run(self) -> None:
        self.not_run = True
        self._rebuild()

    def _highlighted(self) -> str | None:
        table = self.table
        if not table.row_count:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    @on(DataTable.RowHighlighted, "#checks")
    def _highlight(self, event: DataTable.RowHighlighted) -> None:
        self._show_curves(self.checks.get(event.row_key.value))

    def _show_curves(self, check: CheckResult | None) -> None:
        plot = self.query_one(CurvePlot)
        curves = check.curves if check else None
        if curves is None:
            curves = next((c.curves for c in self.checks.values() if c.curves), None)
        plot.set_class(curves is not None, "-shown")
        if curves is not None:
            plot.show_curves(curves)
