"""A grade's results: a status line, a table of checks filled in as they finish, the highlighted
check's full message, and its curves against the reference when it has any."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.containers import VerticalGroup
from textual.widgets import DataTable, Static

from quizapp.tui.grading import CheckLine
from quizapp.tui.widgets.charts import CurvePlot

STATUS = {
    "pass": ("✔ pass", "bold green"),
    "fail": ("✘ fail", "bold red"),
    "error": ("! error", "bold red"),
    "skip": ("- skip", "dim"),
    "usage": ("! not run", "bold red"),
    "waiting": ("… waiting", "dim"),
    "not run": ("- not run", "dim"),
}


def status_text(status: str) -> Text:
    label, style = STATUS.get(status, (status, ""))
    return Text(label, style=style)


class GradeResults(VerticalGroup):
    DEFAULT_CSS = """
    GradeResults { height: auto; }
    GradeResults > #grade-status { padding: 0 1 1 1; }
    GradeResults > DataTable { height: auto; max-height: 12; }
    GradeResults > #check-detail { padding: 1 1 0 1; }
    GradeResults > CurvePlot { display: none; }
    GradeResults > CurvePlot.-shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.checks: dict[str, CheckLine] = {}

    def compose(self):
        yield Static("Not graded in this session yet. Press g to grade your file.", id="grade-status")
        table = DataTable(cursor_type="row", zebra_stripes=True, id="checks")
        table.add_column("result", key="status", width=9)
        table.add_column("check", key="check", width=40)
        table.add_column("message", key="message")
        yield table
        yield Static("", id="check-detail")
        yield CurvePlot(id="curves")

    @property
    def table(self) -> DataTable:
        return self.query_one("#checks", DataTable)

    def set_status(self, text: Text | str) -> None:
        self.query_one("#grade-status", Static).update(text)

    def begin(self, file_label: str) -> None:
        self.checks.clear()
        self.table.clear()
        self.set_status(Text(f"Grading {file_label} … (x cancels)", style="bold"))
        self._show_detail(None)
        self.table.focus()

    def started(self, device: str, torch: str, checks: list[tuple[str, str]]) -> None:
        self.set_status(Text(f"Grading on {device} (torch {torch}) … (x cancels)", style="bold"))
        for check_id, title in checks:
            if check_id not in self.table.rows:
                self.table.add_row(status_text("waiting"), title, "", key=check_id)

    def check_done(self, check: CheckLine) -> None:
        self.checks[check.id] = check
        message = check.message.splitlines()[0] if check.message else ""
        if check.id in self.table.rows:
            self.table.update_cell(check.id, "status", status_text(check.status))
            self.table.update_cell(check.id, "check", check.title)
            self.table.update_cell(check.id, "message", message)
        else:
            self.table.add_row(status_text(check.status), check.title, message, key=check.id)
        self._show_detail(self.checks.get(self._highlighted() or ""))

    def finished(self, report: dict) -> None:
        for check in report.get("checks") or ():
            if isinstance(check, dict) and check.get("id") not in self.checks:
                self.check_done(CheckLine(str(check.get("id")), str(check.get("title") or check.get("id")),
                                          str(check.get("status", "error")), str(check.get("message") or "")))
        status = str(report.get("status", "error"))
        counted = [c for c in self.checks.values() if c.status != "skip"]
        passed = sum(1 for c in counted if c.status == "pass")
        line = status_text(status)
        line.append(f"  {passed}/{len(counted)} checks passed")
        details = [str(report[k]) for k in ("device",) if report.get(k)]
        if report.get("duration_s") is not None:
            details.append(f"{float(report['duration_s']):.1f} s")
        if details:
            line.append("  (" + ", ".join(details) + ")", style="dim")
        if report.get("message"):
            line.append(f"\n{report['message']}")
        self.set_status(line)
        # Go to the first check that did not pass: its message is what the learner wants to read.
        failing = [i for i, key in enumerate(self.table.rows) if self.checks.get(key.value) and
                   self.checks[key.value].status in ("fail", "error")]
        if failing:
            self.table.move_cursor(row=failing[0])
        self._show_detail(self.checks.get(self._highlighted() or ""))

    def failed(self, reason: str) -> None:
        line = status_text("error")
        line.append(f"  {reason}")
        self.set_status(line)
        self._not_run()

    def cancelled(self) -> None:
        self.set_status(Text("Grading cancelled; the grader was stopped.", style="yellow"))
        self._not_run()

    def _not_run(self) -> None:
        for key in self.table.rows:
            if key.value not in self.checks:
                self.table.update_cell(key, "status", status_text("not run"))

    def _highlighted(self) -> str | None:
        table = self.table
        if not table.row_count:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    @on(DataTable.RowHighlighted, "#checks")
    def _highlight(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(self.checks.get(event.row_key.value))

    def _show_detail(self, check: CheckLine | None) -> None:
        detail = self.query_one("#check-detail", Static)
        detail.update(Text.assemble((check.title, "bold"), "\n", check.message) if check and check.message else "")
        plot = self.query_one(CurvePlot)
        curves = check.curves if check else None
        if curves is None:
            curves = next((c.curves for c in self.checks.values() if c.curves), None)
        plot.set_class(curves is not None, "-shown")
        if curves is not None:
            plot.show_curves(curves)
