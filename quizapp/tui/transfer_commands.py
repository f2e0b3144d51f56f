"""Command-palette entries that take progress elsewhere: Anki and JSON export, import, FSRS optimize.

Each asks what it needs in a dialog, then does the work in a thread through the app's own store (one
connection per process; the store's lock keeps each transaction whole) and says how it went in a
notification. In a browser (`quizapp serve`) an export is not written to a path the learner cannot
reach: it is made in memory and delivered as a download, and an import reads a file of the data
folder (where the learner can put one, and where the app's own files live).
The optimizer's torch runs in its own process, never in the app's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from textual.app import App, SystemCommand

from quizapp.study.store import StoreError
from quizapp.tui.context import StudyContext


def transfer_commands(app: App, context: StudyContext | None) -> Iterable[SystemCommand]:
    if context is None:  # the store could not be opened: there is nothing to move
        return
    if app.is_web:
        yield SystemCommand("Export Anki deck", "Download the question bank as an .apkg for Anki",
                            lambda: _run(app, None, lambda: _deliver(app, context, "quizapp.apkg", _export_anki)))
        yield SystemCommand("Export progress", "Download all your progress as a JSON file for another machine",
                            lambda: _run(app, None, lambda: _deliver(app, context, "quizapp-progress.json",
                                                                     _export_json)))
        yield SystemCommand("Import progress", f"Merge a progress file kept in {context.work_dir}",
                            lambda: _ask_path(app, context, "Import progress from (a file in this folder):",
                                              _newest_json(context.work_dir), _import_json, folder=context.work_dir))
    else:
        yield SystemCommand("Export Anki deck", "Write the question bank as an .apkg for Anki",
                            lambda: _ask_path(app, context, "Write the Anki deck to:", "quizapp.apkg", _export_anki))
        yield SystemCommand("Export progress", "Write all your progress to a JSON file for another machine",
                            lambda: _ask_path(app, context, "Write your progress to:", "quizapp-progress.json",
                                              _export_json))
        yield SystemCommand("Import progress", "Merge a progress file from `Export progress`; twice changes nothing",
                            lambda: _ask_path(app, context, "Import progress from:", "quizapp-progress.json",
                                              _import_json))
    yield SystemCommand("Optimize scheduler", "Fit FSRS to your reviews; kept only if it predicts you better",
                        lambda: _run(app, "Fitting FSRS to your reviews (this can take a few minutes)...",
                                     lambda: _optimize(context)))


def _ask_path(app: App, context: StudyContext, prompt: str, default: str,
              work: Callable[[StudyContext, Path], tuple[str, str]], *, folder: Path | None = None) -> None:
    from quizapp.tui.screens.dialogs import PathScreen

    def chosen(value: str | None) -> None:
        if value:
            path = Path(value).expanduser()
            _run(app, None, lambda: work(context, path if path.is_absolute() else context.work_dir / path))

    app.push_screen(PathScreen(prompt, default, folder=folder), chosen)


def _newest_json(folder: Path) -> str:
    """The newest .json in `folder` (what a learner just put there), else the export's usual name."""
    try:
        found = max(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, default=None)
    except OSError:
        found = None
    return found.name if found is not None else "quizapp-progress.json"


def _deliver(app: App, context: StudyContext, name: str,
             work: Callable[[StudyContext, Path], tuple[str, str]]) -> tuple[str, str]:
    """Make the file in a temporary folder, then hand its bytes to the browser as a download."""
    import io
    import tempfile

    with tempfile.TemporaryDirectory(prefix="quizapp-export-") as folder:
        path = Path(folder) / name
        message, severity = work(context, path)
        if severity == "error":
            return message, severity
        data = path.read_bytes()
    app.call_from_thread(app.deliver_binary, io.BytesIO(data), save_filename=name,
                         mime_type="application/json" if name.endswith(".json") else "application/octet-stream")
    return f"{name} ({len(data) / 1024:,.0f} KB) is on its way to your browser's downloads.", "information"


def _run(app: App, starting: str | None, work: Callable[[], tuple[str, str]]) -> None:
    """Run work() in a thread; it returns (message, severity) for the notification."""
    if starting:
        app.notify(starting, title="Working")

    def in_thread() -> None:
        try:
            message, severity = work()
        except StoreError as exc:  # the store's own failures included: it wraps every sqlite3 error
            message, severity = str(exc), "error"
        app.call_from_thread(app.notify, message, severity=severity, timeout=10)

    app.run_worker(in_thread, thread=True, group="transfer", exit_on_error=False)


def _export_anki(context: StudyContext, path: Path) -> tuple[str, str]:
    from quizapp.export.anki import write_apkg

    if path.suffix.lower() != ".apkg":
        return f"{path.name}: an Anki package ends in .apkg", "error"
    try:
        summary = write_apkg(context.bank, path)
    except OSError as exc:
        return f"Cannot write {path}: {exc.strerror or exc}", "error"
    return f"Wrote {path}: {summary.notes} notes in {summary.decks} subdecks. Open it with Anki.", "information"


def _export_json(context: StudyContext, path: Path) -> tuple[str, str]:
    from quizapp.study.transfer import write_export

    try:
        document = write_export(context.store, path)
    except OSError as exc:
        return f"Cannot write {path}: {exc.strerror or exc}", "error"
    return (f"Wrote {path}: {len(document['answers'])} answers, {len(document['grades'])} grades, "
            f"{len(document['interviews'])} interviews.", "information")


def _import_json(context: StudyContext, path: Path) -> tuple[str, str]:
    from quizapp.study.transfer import TransferError, import_progress, read_export

    try:
        document = read_export(path)
    except TransferError as exc:
        return f"{exc}\nNothing was imported.", "error"
    summary = import_progress(context.store, document)
    settings = "".join(f" Your setting came along: {_setting(name, value)}." for name, value in summary.settings)
    settings += "".join(f" Kept this machine's {_setting(name, kept)} (the file has {theirs})."
                        for name, kept, theirs in summary.settings_kept)
    if not summary.changed:
        return f"Nothing new in {path.name}: everything in it is already here.{settings}", "information"
    return (f"Imported {summary.answers} answers ({summary.cards} cards rescheduled), {summary.grades} grades, "
            f"{summary.interviews} interviews.{settings}", "information")


def _setting(name: str, value) -> str:
    return f"{name.replace('_', '-')} = {value}"


def _optimize(context: StudyContext) -> tuple[str, str]:
    from quizapp.study.fitting import FitError, optimize

    try:
        result = optimize(context.store)  # the app's own connection: one per process, safe from this thread
    except FitError as exc:
        return str(exc), "warning"
    losses = f"log loss {result.fitted_loss:.4f} fitted vs {result.current_loss:.4f} in use"
    if result.kept:
        return f"Kept the fitted parameters ({losses}); your cards were rescheduled with them.", "information"
    return f"Kept the parameters in use: the fit predicts you no better ({losses}).", "information"
