"""The progress store: SQLite in the data dir, one transaction per write, safe for many processes.

Two rules keep the WAL and its locks intact while the app, the CLI and `watch` share the file:

- Nothing opens the database file except SQLite. SQLite's locks are POSIX advisory locks, which a
  process loses on *every* descriptor of a file as soon as it closes *any* descriptor of it; a plain
  `open()` + `close()` of the database would silently drop the live connection's locks, and the next
  process to close would take itself for the last user and delete the WAL under us.
- One process keeps one connection per database: `Store.open()` hands out the process's open store
  again (counted; the last `close()` closes it), so a second open in the app never races the first.
  The connection may be used from any thread; a lock keeps each transaction and read whole.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import uuid
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from functools import wraps
from pathlib import Path
from typing import NamedTuple

from quizapp import paths
from quizapp.study import fsrs_params
from quizapp.study.schema import MIGRATIONS, SCHEMA_VERSION

FSRS_PARAMETERS_KEY = "fsrs_parameters"
BUSY_TIMEOUT_S = 10.0


class StoreError(Exception):
    """The database cannot be used as it is; the message says why and where the file is."""

    ADVICE = "Nothing was changed. Move the file away to start afresh, or point QUIZAPP_HOME elsewhere."

    def __init__(self, path: Path, reason: str, advice: str | None = None):
        advice = self.ADVICE if advice is None else advice
        super().__init__(f"{reason}\n  database: {path}" + (f"\n  {advice}" if advice else ""))
        self.path = path
        self.reason = reason


class StoreFailed(StoreError):
    """A read or a write failed on a database that opened fine: another process held the write lock
    past the busy timeout, the disk is full, an I/O error. The store raises this for every
    sqlite3.Error, so nothing outside `study/` needs to know about sqlite3."""

    def __init__(self, path: Path, error: Exception):
        self.busy = _is_busy(error)
        if self.busy:
            reason = (f"another process (the app, a grade, `watch`) held the progress database's write lock "
                      f"for over {BUSY_TIMEOUT_S:g} s")
        else:
            reason = f"the progress database failed: {error}"
        super().__init__(path, reason, advice="")


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat()


# NamedTuples: the store is imported on the way to the first screen, where a dataclass's generated
# methods would be compiled at import (about 1 ms apiece on a slow machine).
class GradeRecord(NamedTuple):
    exercise_id: str
    graded_at: str
    status: str
    checks_passed: int
    checks_total: int
    device: str | None
    duration_s: float | None
    file_path: str | None


class GradeEvent(NamedTuple):
    """A grade as the exercise schedule replays it."""

    uid: str
    exercise_id: str
    graded_at: str
    status: str
    file_hash: str | None
    review: tuple[str, ...]  # the question ids the grade's failed checks point at


class ExerciseEvent(NamedTuple):
    uid: str
    exercise_id: str
    kind: str  # hint | solution
    at: str


EXERCISE_EVENT_KINDS = ("hint", "solution")


class QuestionMark(NamedTuple):
    """The learner's marks on one question: a flag (doubtful, with a note) and suspended (in no session)."""

    question_id: str
    flagged: bool
    note: str | None
    suspended: bool
    updated_at: str  # ISO UTC


class UndoRefused(Exception):
    """An answer cannot be taken back; the message says why. Nothing was changed."""


NEW_PER_DAY_KEY = "new_per_day"
DEFAULT_NEW_PER_DAY = 20


class InterviewRecord(NamedTuple):
    uid: str
    started_at: datetime
    finished_at: datetime
    minutes: float
    score: float
    report: dict


def _json():
    """The json module, imported on first use: importing it compiles its scanner's patterns (about
    3 ms), and a new learner's first screen reads no JSON from the store."""
    import json

    return json


def new_uid() -> str:
    """A stable id for one record, the same on every machine it travels to."""
    return uuid.uuid4().hex


def _locked(method):
    """Run a read under the store's lock, so it never lands inside another thread's transaction."""

    @wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            try:
                return method(self, *args, **kwargs)
            except sqlite3.Error as exc:
                raise StoreFailed(self.path, exc) from exc

    return locked


# This process's open stores, by resolved path: Store.open() shares them (see the module docstring).
_OPEN: dict[Path, "Store"] = {}
_OPEN_LOCK = threading.Lock()


class Store:
    """Open with `Store.open()`; every public write is one transaction."""

    def __init__(self, conn: sqlite3.Connection, path: Path):
        self.conn = conn
        self.path = path
        self._lock = threading.RLock()
        self._users = 1
        self._pid = os.getpid()
        self._registry_key = path.expanduser().resolve()

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | None = None) -> "Store":
        path = Path(path) if path is not None else paths.db_path()
        key = path.expanduser().resolve()
        with _OPEN_LOCK:
            shared = _OPEN.get(key)
            if shared is not None and shared._pid == os.getpid():  # a forked child never reuses its parent's
                shared._users += 1
                return shared
            store = cls._open_new(path)
            _OPEN[store._registry_key] = store
            return store

    @classmethod
    def _open_new(cls, path: Path) -> "Store":
        if path.is_dir():  # a stat, not an open(): see the module docstring
            raise StoreError(path, "the progress database path is a folder")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(path, f"cannot create the data folder: {exc.strerror or exc}") from None
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                return cls._connect(path)
            except sqlite3.OperationalError as exc:
                # Switching a new file to WAL can answer "locked" at once, without waiting on the
                # busy handler, while another process does the same: that is busy, not corrupt.
                if not _is_busy(exc):
                    raise StoreError(path, f"cannot open the progress database: {exc}") from None
                if time.monotonic() > deadline:
                    raise StoreError(path, f"the progress database stayed locked by another process for "
                                           f"{BUSY_TIMEOUT_S:g} s") from None
                time.sleep(0.05)

    @classmethod
    def _connect(cls, path: Path) -> "Store":
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            # quick_check reads every page: a damaged file is caught here, not half-way through a session.
            if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise sqlite3.DatabaseError("integrity check failed")
            store = cls(conn, path)
            store._migrate()
        except (sqlite3.Error, StoreFailed) as exc:
            conn.close()
            # The migration and the settings read go through the store's own wrappers: judge their cause.
            error = exc.__cause__ if isinstance(exc, StoreFailed) else exc
            if isinstance(error, sqlite3.OperationalError) and _is_busy(error):
                raise error from None  # _open_new waits and tries again
            if "not a database" in str(error):  # SQLite read the header and refused the file, untouched
                raise StoreError(path, "the progress database is corrupt: the file is not an SQLite database") from None
            raise StoreError(path, f"the progress database is corrupt or not a database ({error})") from None
        except StoreError:
            conn.close()
            raise
        return store

    def close(self) -> None:
        """Give this handle back; the connection closes with the process's last one."""
        with _OPEN_LOCK:
            if self._users <= 0:
                return
            self._users -= 1
            if self._users:
                return
            if _OPEN.get(self._registry_key) is self:
                del _OPEN[self._registry_key]
        with self._lock:
            self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def transaction(self):
        """BEGIN IMMEDIATE takes the write lock up front, so two writers queue instead of deadlocking."""
        with self._lock:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreFailed(self.path, exc) from exc
            try:
                yield self.conn
            except BaseException as exc:
                with suppress(sqlite3.Error):  # a failed rollback must not hide why it was needed
                    self.conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise StoreFailed(self.path, exc) from exc
                raise
            else:
                try:
                    self.conn.execute("COMMIT")
                except sqlite3.Error as exc:
                    with suppress(sqlite3.Error):
                        self.conn.execute("ROLLBACK")
                    raise StoreFailed(self.path, exc) from exc

    @contextmanager
    def snapshot(self):
        """Several reads that see one state of the database (a read transaction), e.g. for an export."""
        with self._lock:
            try:
                self.conn.execute("BEGIN")
            except sqlite3.Error as exc:
                raise StoreFailed(self.path, exc) from exc
            try:
                yield self.conn
            except sqlite3.Error as exc:
                raise StoreFailed(self.path, exc) from exc
            finally:
                with suppress(sqlite3.Error):
                    self.conn.execute("COMMIT")

    def _migrate(self) -> None:
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(self.path, f"the progress database is from a newer quizapp (schema {version}; this one knows up to {SCHEMA_VERSION}); upgrade quizapp")
        if version == SCHEMA_VERSION:
            return
        with self.transaction() as conn:
            # Re-read under the write lock: another process may have migrated meanwhile.
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            for step in range(version, SCHEMA_VERSION):
                for statement in _statements(MIGRATIONS[step]):
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @property
    @_locked
    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    # -- writes -----------------------------------------------------------------------------

    def record_answer(self, question_id: str, topic: str, *, rating: int, correct: bool | None,
                      reschedule, at: datetime, duration_ms: int | None = None, response=None,
                      uid: str | None = None) -> str:
        """The answer row and the card's new FSRS state, together or not at all; returns the answer's uid.

        `reschedule(old_card_json_or_None) -> (new_card_json, due)` runs under the write lock, so
        two processes reviewing the same card cannot lose one of the reviews. The card row as it was
        is kept with the answer (`previous_card`), so that `undo_answer` can put it back exactly.
        """
        uid = uid or new_uid()
        with self.transaction() as conn:
            row = conn.execute("SELECT topic, due, card, reviewed_at FROM cards WHERE question_id = ?",
                               (question_id,)).fetchone()
            card_json, due = reschedule(row[2] if row else None)
            previous = None if row is None else dict(zip(("topic", "due", "card", "reviewed_at"), row))
            conn.execute(
                "INSERT INTO answers (uid, question_id, topic, answered_at, correct, rating, duration_ms, response,"
                " previous_card) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (uid, question_id, topic, iso(at), None if correct is None else int(correct), rating,
                 duration_ms, _json().dumps(response), _json().dumps(previous)),
            )
            conn.execute(
                "INSERT INTO cards (question_id, topic, due, card, reviewed_at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT(question_id) DO UPDATE SET topic = excluded.topic, due = excluded.due,"
                " card = excluded.card, reviewed_at = excluded.reviewed_at",
                (question_id, topic, iso(due), card_json, iso(at)),
            )
        return uid

    def undo_answer(self, uid: str) -> str:
        """Take back one answer: its row is deleted and the question's card is put back exactly as it
        was before it (deleted when there was none). Returns the question id. Refuses (UndoRefused)
        an answer that is gone, that was not recorded with its card's earlier state (imported, or
        from before undo existed), or that is no longer the question's latest."""
        with self.transaction() as conn:
            row = conn.execute("SELECT id, question_id, previous_card FROM answers WHERE uid = ?", (uid,)).fetchone()
            if row is None:
                raise UndoRefused("that answer is no longer in the progress store")
            answer_id, question_id, previous = row
            if previous is None:
                raise UndoRefused("that answer was not saved with what it replaced, so it cannot be taken back")
            if conn.execute("SELECT 1 FROM answers WHERE question_id = ? AND id > ? LIMIT 1",
                            (question_id, answer_id)).fetchone():
                raise UndoRefused(f"{question_id} was answered again since (in another window?)")
            conn.execute("DELETE FROM answers WHERE id = ?", (answer_id,))
            card = _json().loads(previous)
            if card is None:
                conn.execute("DELETE FROM cards WHERE question_id = ?", (question_id,))
            else:
                conn.execute(
                    "INSERT INTO cards (question_id, topic, due, card, reviewed_at) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT(question_id) DO UPDATE SET topic = excluded.topic, due = excluded.due,"
                    " card = excluded.card, reviewed_at = excluded.reviewed_at",
                    (question_id, card["topic"], card["due"], card["card"], card["reviewed_at"]))
        return question_id

    def set_mark(self, question_id: str, *, flagged: bool | None = None, note: str | None = None,
                 suspended: bool | None = None, at: datetime | None = None) -> QuestionMark:
        """Flag or unflag a question (with the learner's note), or suspend or unsuspend it; what is not
        given is kept. Returns the question's marks as they are now. A question with neither mark
        keeps no row."""
        with self.transaction() as conn:
            row = conn.execute("SELECT flagged, note, suspended FROM question_marks WHERE question_id = ?",
                               (question_id,)).fetchone()
            was_flagged, was_note, was_suspended = (bool(row[0]), row[1], bool(row[2])) if row else (False, None, False)
            flag = was_flagged if flagged is None else flagged
            text = (note if note is not None else was_note) if flag else None
            hold = was_suspended if suspended is None else suspended
            mark = QuestionMark(question_id, flag, text or None, hold, iso(at or utcnow()))
            conn.execute(
                "INSERT INTO question_marks (question_id, flagged, note, suspended, updated_at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT(question_id) DO UPDATE SET flagged = excluded.flagged, note = excluded.note,"
                " suspended = excluded.suspended, updated_at = excluded.updated_at",
                (question_id, int(mark.flagged), mark.note, int(mark.suspended), mark.updated_at))
        return mark

    def record_grade(self, exercise_id: str, *, status: str, checks_passed: int, checks_total: int,
                     device: str | None = None, duration_s: float | None = None,
                     file_path: str | None = None, file_hash: str | None = None,
                     report: dict | None = None, at: datetime | None = None) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO grades (uid, exercise_id, graded_at, file_path, file_hash, device, status,"
                " checks_passed, checks_total, duration_s, report) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (new_uid(), exercise_id, iso(at or utcnow()), file_path, file_hash, device, status,
                 checks_passed, checks_total, duration_s, _json().dumps(report) if report else None),
            )

    def record_exercise_event(self, exercise_id: str, kind: str, at: datetime | None = None) -> None:
        """A hint shown or the reference read: how a pass is rated depends on them."""
        if kind not in EXERCISE_EVENT_KINDS:
            raise ValueError(f"an exercise event is one of {EXERCISE_EVENT_KINDS}, got {kind!r}")
        with self.transaction() as conn:
            conn.execute("INSERT INTO exercise_events (uid, exercise_id, kind, at) VALUES (?, ?, ?, ?)",
                         (new_uid(), exercise_id, kind, iso(at or utcnow())))

    def record_interview(self, *, started_at: datetime, finished_at: datetime, minutes: float, score: float,
                         report: dict) -> str:
        """Keep one finished mock interview; returns its uid."""
        if not -1e-9 <= score <= 1.0 + 1e-9:  # a weighted mean may overshoot 1 by a rounding error
            raise ValueError(f"an interview score is a fraction from 0 to 1, got {score!r}")
        score = min(1.0, max(0.0, float(score)))
        uid = new_uid()
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO interviews (uid, started_at, finished_at, minutes, score, report) VALUES (?, ?, ?, ?, ?, ?)",
                (uid, iso(started_at), iso(finished_at), float(minutes), float(score), _json().dumps(report)),
            )
        return uid

    def set_setting(self, key: str, value) -> None:
        """Store a JSON-able value under key (replacing any earlier one)."""
        with self.transaction() as conn:
            conn.execute("INSERT INTO settings (key, value) VALUES (?, ?)"
                         " ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, _json().dumps(value)))

    def set_hints_shown(self, exercise_id: str, n: int) -> None:
        """Remember that hints 1..n of the exercise were shown (in the app or the CLI). Never lowers
        what is stored: the compare and the write are one statement, so two processes showing hints
        at once keep the higher count. Stored as the setting `hints_shown:<exercise_id>`."""
        n = int(n)
        if n <= 0:
            return
        with self.transaction() as conn:
            conn.execute("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET"
                         " value = excluded.value WHERE CAST(settings.value AS INTEGER) < ?",
                         (_hints_key(exercise_id), _json().dumps(n), n))

    def set_own_file(self, exercise_id: str, folder: Path, path: Path | None) -> None:
        """Remember `path` as the learner's file for the exercise in the app started from `folder`;
        None forgets it. Stored as the setting `own_file:<exercise_id>`: {folder: path}, absolute."""
        key = _own_file_key(exercise_id)
        with self.transaction() as conn:
            row = conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
            files = _path_map(row[0] if row else None)
            if path is None:
                files.pop(os.path.abspath(folder), None)
            else:
                files[os.path.abspath(folder)] = os.path.abspath(path)
            if files:
                conn.execute("INSERT INTO settings (key, value) VALUES (?, ?)"
                             " ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, _json().dumps(files)))
            else:
                conn.execute("DELETE FROM settings WHERE key = ?", (key,))

    def delete_setting(self, key: str) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM settings WHERE key = ?", (key,))

    def set_fsrs_parameters(self, parameters: list[float] | None) -> None:
        """Schedule with these fitted parameters from now on (None: back to FSRS's defaults)."""
        if parameters is None:
            self.delete_setting(FSRS_PARAMETERS_KEY)
        else:
            self.set_setting(FSRS_PARAMETERS_KEY, [float(p) for p in parameters])

    # -- reads ------------------------------------------------------------------------------

    @_locked
    def interviews(self) -> list[InterviewRecord]:
        """Every kept interview, oldest first."""
        rows = self.conn.execute("SELECT uid, started_at, finished_at, minutes, score, report FROM interviews"
                                 " ORDER BY started_at, id")
        return [InterviewRecord(uid, datetime.fromisoformat(start), datetime.fromisoformat(end), minutes, score,
                                _json().loads(report))
                for uid, start, end, minutes, score, report in rows]

    def fsrs_parameters(self) -> tuple[float, ...] | None:
        """The fitted FSRS parameters, or None to use FSRS's defaults."""
        stored = self.setting(FSRS_PARAMETERS_KEY)
        return fsrs_params.parse(stored)

    @_locked
    def setting(self, key: str, default=None):
        """The JSON value stored under key, or default."""
        row = self.conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return _json().loads(row[0]) if row else default

    def hints_shown(self, exercise_id: str) -> int:
        """How many of the exercise's hints the learner has seen, in the app or the CLI (0: none)."""
        value = self.setting(_hints_key(exercise_id), 0)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    @_locked
    def own_file(self, exercise_id: str, folder: Path) -> Path | None:
        """The file the learner made theirs for the exercise in the app started from `folder`, if any
        (see `set_own_file`); it may have been deleted since."""
        row = self.conn.execute("SELECT value FROM settings WHERE key = ?", (_own_file_key(exercise_id),)).fetchone()
        path = _path_map(row[0] if row else None).get(os.path.abspath(folder))
        return Path(path) if path else None

    @_locked
    def card_json(self, question_id: str) -> str | None:
        row = self.conn.execute("SELECT card FROM cards WHERE question_id = ?", (question_id,)).fetchone()
        return row[0] if row else None

    @_locked
    def cards(self) -> dict[str, tuple[str, str]]:
        """question id -> (due ISO, card JSON)."""
        return {qid: (due, card) for qid, due, card in self.conn.execute("SELECT question_id, due, card FROM cards")}

    @_locked
    def due_question_ids(self, now: datetime) -> list[str]:
        rows = self.conn.execute("SELECT question_id FROM cards WHERE due <= ? ORDER BY due", (iso(now),))
        return [r[0] for r in rows]

    @_locked
    def answers(self, since: datetime | None = None) -> list[sqlite3.Row]:
        self.conn.row_factory = sqlite3.Row
        try:
            if since is None:
                return self.conn.execute("SELECT * FROM answers ORDER BY id").fetchall()
            return self.conn.execute("SELECT * FROM answers WHERE answered_at >= ? ORDER BY id", (iso(since),)).fetchall()
        finally:
            self.conn.row_factory = None

    @_locked
    def first_answered(self) -> dict[str, str]:
        """question id -> when it was first answered (ISO UTC): the day a question stopped being new."""
        return dict(self.conn.execute("SELECT question_id, MIN(answered_at) FROM answers GROUP BY question_id"))

    @_locked
    def marks(self) -> dict[str, QuestionMark]:
        """question id -> its marks, for every question flagged or suspended (rows with neither mark are
        kept too: an import needs their time, but readers see them as unmarked)."""
        rows = self.conn.execute("SELECT question_id, flagged, note, suspended, updated_at FROM question_marks"
                                 " ORDER BY question_id")
        return {qid: QuestionMark(qid, bool(flagged), note, bool(suspended), at)
                for qid, flagged, note, suspended, at in rows}

    @_locked
    def suspended_ids(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT question_id FROM question_marks WHERE suspended = 1")}

    def new_per_day(self) -> int:
        """The learner's daily limit of new questions (`quizapp config new-per-day N`)."""
        value = self.setting(NEW_PER_DAY_KEY, DEFAULT_NEW_PER_DAY)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else DEFAULT_NEW_PER_DAY

    @_locked
    def answers_of(self, question_id: str) -> list[tuple[str, int | None, int, int | None]]:
        """One question's answers, oldest first: (answered_at ISO UTC, correct 1/0/None, rating, duration_ms)."""
        return self.conn.execute("SELECT answered_at, correct, rating, duration_ms FROM answers WHERE question_id = ?"
                                 " ORDER BY answered_at, id", (question_id,)).fetchall()

    @_locked
    def answer_count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    @_locked
    def grades(self, exercise_id: str | None = None) -> list[GradeRecord]:
        sql = ("SELECT exercise_id, graded_at, status, checks_passed, checks_total, device, duration_s, file_path"
               " FROM grades")
        args: tuple = ()
        if exercise_id is not None:
            sql += " WHERE exercise_id = ?"
            args = (exercise_id,)
        return [GradeRecord(*row) for row in self.conn.execute(sql + " ORDER BY id", args)]

    @_locked
    def grade_events(self, exercise_id: str | None = None) -> list[GradeEvent]:
        """Every grade in the order it was recorded, with the questions its failed checks point at."""
        sql = "SELECT uid, exercise_id, graded_at, status, file_hash, report FROM grades"
        args: tuple = ()
        if exercise_id is not None:
            sql += " WHERE exercise_id = ?"
            args = (exercise_id,)
        return [GradeEvent(uid, ex, at, status, file_hash, _review_of(report))
                for uid, ex, at, status, file_hash, report in self.conn.execute(sql + " ORDER BY id", args)]

    @_locked
    def last_answered(self) -> dict[str, str]:
        """question id -> when it was last answered (ISO UTC)."""
        return dict(self.conn.execute("SELECT question_id, MAX(answered_at) FROM answers GROUP BY question_id"))

    @_locked
    def exercise_events(self, exercise_id: str | None = None) -> list[ExerciseEvent]:
        sql = "SELECT uid, exercise_id, kind, at FROM exercise_events"
        args: tuple = ()
        if exercise_id is not None:
            sql += " WHERE exercise_id = ?"
            args = (exercise_id,)
        return [ExerciseEvent(*row) for row in self.conn.execute(sql + " ORDER BY id", args)]

    @_locked
    def activity_days_utc(self) -> list[str]:
        """Every moment of study (answers and grades), as ISO UTC strings."""
        rows = self.conn.execute("SELECT answered_at FROM answers UNION ALL SELECT graded_at FROM grades")
        return [r[0] for r in rows]


def _hints_key(exercise_id: str) -> str:
    return f"hints_shown:{exercise_id}"


def _own_file_key(exercise_id: str) -> str:
    return f"own_file:{exercise_id}"


def _path_map(value_json: str | None) -> dict[str, str]:
    """A stored {folder: path} object; empty for none and for a damaged one."""
    if not value_json:
        return {}
    try:
        value = _json().loads(value_json)
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str) and v}


def _review_of(report_json: str | None) -> tuple[str, ...]:
    """The `review` list of a stored grade report; empty for older reports and damaged ones."""
    if not report_json or '"review"' not in report_json:
        return ()
    try:
        review = _json().loads(report_json).get("review")
    except (ValueError, AttributeError):
        return ()
    return tuple(q for q in review if isinstance(q, str)) if isinstance(review, list) else ()


def _is_busy(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _statements(script: str) -> list[str]:
    """Split a script into statements; complete_statement knows about comments and quoted ';'."""
    statements, pending = [], ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    if pending.strip():
        statements.append(pending.strip())
    return statements
