"""Progress that travels: all of the store as one versioned JSON file, and merging such a file back in.

Every record carries a stable uid; an import adds the records this store lacks and leaves the rest
alone, so importing a file twice, or two machines importing each other's files, counts nothing
twice. Card states are not taken from the file: they follow from the review log, so the cards of
every question that gained answers are replayed from all its answers in time order, which makes two
machines with the same answers agree. The format is documented in docs/progress-json.md.
"""

from __future__ import annotations

import errno
import json
import math
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from quizapp import __version__
from quizapp.bank.files import UnreadableFile, read_regular_file
from quizapp.study import fsrs_params
from quizapp.study.cards import card_problem
from quizapp.study.store import (
    DEFAULT_NEW_PER_DAY,
    EXERCISE_EVENT_KINDS,
    FSRS_PARAMETERS_KEY,
    NEW_PER_DAY_KEY,
    Store,
    iso,
    utcnow,
)

FORMAT = "quizapp-progress"
FORMAT_VERSION = 1

# What an import takes. Years of study make a few MB; a file far beyond is not an export.
MAX_FILE_BYTES = 256 * 2**20
MAX_NESTING = 64  # of a free-form value (a response, a report): ours nest a handful of levels
MAX_WHOLE = 2**63 - 1  # SQLite's INTEGER
MAX_NEW_PER_DAY = 10_000  # as `quizapp config new-per-day` takes it
EARLIEST = datetime(1970, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(3000, 1, 1, tzinfo=timezone.utc)  # due dates are computed up to 100 years past a review


class TransferError(Exception):
    """The file cannot be imported; the message says why. Nothing was changed."""


@dataclass(frozen=True)
class ImportSummary:
    answers: int
    grades: int
    interviews: int
    cards: int  # questions whose card was recomputed
    parameters: bool  # fitted FSRS parameters adopted from the file
    exercise_events: int = 0  # hints shown and references read (an exercise's schedule replays them)
    question_marks: int = 0  # questions whose flag or suspension the file brought (a later mark wins)
    # Study settings: those taken from the file (name -> value), and those this store kept over a
    # different value in the file (name -> (kept, the file's)).
    settings: tuple[tuple[str, int], ...] = ()
    settings_kept: tuple[tuple[str, int, int], ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.answers or self.grades or self.interviews or self.parameters or self.exercise_events
                    or self.question_marks or self.settings)


# -- export ---------------------------------------------------------------------------------------

def export_progress(store: Store, *, now: datetime | None = None) -> dict:
    """Everything the store knows about the learner, as the JSON-able document of FORMAT_VERSION."""
    parameters = store.fsrs_parameters()
    with store.snapshot() as conn:  # one state of the store, even while another process writes
        answers = [
            {"uid": uid, "question_id": qid, "topic": topic, "answered_at": at,
             "correct": None if correct is None else bool(correct), "rating": rating, "duration_ms": duration_ms,
             "response": _loads_or_none(response)}
            for uid, qid, topic, at, correct, rating, duration_ms, response in conn.execute(
                "SELECT uid, question_id, topic, answered_at, correct, rating, duration_ms, response"
                " FROM answers ORDER BY answered_at, uid")
        ]
        cards = _exported_cards(conn.execute("SELECT question_id, topic, due, reviewed_at, card FROM cards"
                                             " ORDER BY question_id").fetchall(), answers, parameters)
        grades = [
            {"uid": uid, "exercise_id": exercise_id, "graded_at": at, "status": status, "checks_passed": passed,
             "checks_total": total, "device": device, "duration_s": duration_s, "file_path": file_path,
             "file_hash": file_hash, "report": None if report is None else _report(report)}
            for uid, exercise_id, at, status, passed, total, device, duration_s, file_path, file_hash, report
            in conn.execute("SELECT uid, exercise_id, graded_at, status, checks_passed, checks_total, device,"
                            " duration_s, file_path, file_hash, report FROM grades ORDER BY graded_at, uid")
        ]
        exercise_events = [
            {"uid": uid, "exercise_id": exercise_id, "kind": kind, "at": at}
            for uid, exercise_id, kind, at in conn.execute(
                "SELECT uid, exercise_id, kind, at FROM exercise_events ORDER BY at, uid")
        ]
        question_marks = [
            {"question_id": qid, "flagged": bool(flagged), "note": note, "suspended": bool(suspended),
             "updated_at": at}
            for qid, flagged, note, suspended, at in conn.execute(
                "SELECT question_id, flagged, note, suspended, updated_at FROM question_marks ORDER BY question_id")
        ]
        interviews = [
            {"uid": uid, "started_at": started, "finished_at": finished, "minutes": minutes, "score": score,
             "report": _report(report)}
            for uid, started, finished, minutes, score, report in conn.execute(
                "SELECT uid, started_at, finished_at, minutes, score, report FROM interviews ORDER BY started_at, uid")
        ]
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "exported_at": iso(now or utcnow()),
        "quizapp": __version__,
        "fsrs_parameters": list(parameters) if parameters else None,
        "settings": {name: reader(store) for name, (_, reader) in STUDY_SETTINGS.items()},
        "answers": answers,
        "cards": cards,
        "grades": grades,
        "interviews": interviews,
        "exercise_events": exercise_events,
        "exercises": _exported_exercises(grades, exercise_events),
        "question_marks": question_marks,
    }


def _exported_exercises(grades: list[dict], events: list[dict]) -> list[dict]:
    """Each passed exercise's review state when the file was written, for readers (an import replays
    the grades and events instead, as it does answers for cards)."""
    from quizapp.catalog import load_catalog
    from quizapp.study.due import catalog_schedules
    from quizapp.study.store import ExerciseEvent, GradeEvent

    graded = [GradeEvent(g["uid"], g["exercise_id"], g["graded_at"], g["status"], g["file_hash"],
                         tuple((g["report"] or {}).get("review") or ()) if isinstance(g["report"], dict) else ())
              for g in grades]
    marks = [ExerciseEvent(e["uid"], e["exercise_id"], e["kind"], e["at"]) for e in events]
    catalog = load_catalog()
    ids = sorted({g.exercise_id for g in graded})
    states = catalog_schedules(catalog, sorted(graded, key=lambda g: g.graded_at), marks, ids)
    return [{"exercise_id": ex, "due": iso(s.due), "card": json.loads(s.card_json),
             "reviews": [{"at": iso(r.at), "rating": r.rating, "grade_uid": r.grade_uid} for r in s.reviews]}
            for ex, s in states.items() if s.due is not None]


def _exported_cards(rows, answers: list[dict], parameters) -> list[dict]:
    """The cards section: a damaged card as its answers rebuild it, or left out when it has none (the
    answers are what an import goes by; the cards are there for readers)."""
    if any(card_problem(card) for *_, card in rows):
        from quizapp.study.schedule import readable_cards

        readable = readable_cards({qid: (due, card) for qid, _, due, _, card in rows}, answers, parameters)
    else:
        readable = {qid: (due, card) for qid, _, due, _, card in rows}
    return [{"question_id": qid, "topic": topic, "due": readable[qid][0], "reviewed_at": reviewed_at,
             "card": json.loads(readable[qid][1])}
            for qid, topic, _, reviewed_at, _ in rows if qid in readable]


def _report(text: str) -> dict:
    """A stored report as the object the format promises; one that is not (damaged) is kept as its text."""
    value = _loads_or_none(text)
    return value if isinstance(value, dict) else {"unreadable": text}


def _store_files(store: Store) -> list[Path]:
    return [store.path.with_name(store.path.name + suffix) for suffix in ("", "-wal", "-shm", "-journal")]


def _same_file(a: Path, b: Path) -> bool:
    """Whether a and b are one file (a link, a hard link or another spelling of it), by stat only."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): compare where their names lead
        pass
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # a symlink loop leads nowhere, so not to the store
        return False


def write_export(store: Store, path: Path) -> dict:
    """Write the export to path atomically (a half-written file never replaces a good one).

    Refuses (OSError, with the reason as its strerror) a path that is the progress database or one of
    its WAL files: replacing it would destroy the very progress being exported.
    """
    tmp = path.with_name(path.name + ".part")
    for target in (path, tmp):
        if any(_same_file(target, own) for own in _store_files(store)):
            raise OSError(errno.EINVAL, "that is your progress database itself (or one of its files); "
                                        "name a new file, e.g. progress.json", str(path))
    document = export_progress(store)
    try:
        # A lone surrogate (kept from a terminal's undecodable input) is written as its JSON escape.
        tmp.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8",
                       errors="backslashreplace")
        tmp.replace(path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    return document


def _loads_or_none(text: str | None):
    if text is None:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text  # stored by hand or by an old build: keep it as the string it is


# -- import ---------------------------------------------------------------------------------------

def read_export(path: Path) -> dict:
    """The parsed, fully checked document in path; TransferError says what is wrong with it."""
    try:
        raw = read_regular_file(path, limit=MAX_FILE_BYTES, what="progress export")
    except UnreadableFile as exc:
        raise TransferError(f"{path}: {exc}") from None
    try:
        document = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise TransferError(f"{path}: not a quizapp progress export (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise TransferError(f"{path}: damaged: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise TransferError(f"{path}: damaged: values nested too deeply to read (quizapp nests a few levels)") from None
    except ValueError:  # an integer of thousands of digits, which Python refuses to convert
        raise TransferError(f"{path}: damaged: a number thousands of digits long (quizapp writes none above "
                            f"19 digits)") from None
    try:
        validate(document)
    except TransferError as exc:
        raise TransferError(f"{path}: {exc}") from None
    return document


def import_progress(store: Store, document: dict) -> ImportSummary:
    """Merge a validated document into the store in one transaction; records already here are kept."""
    validate(document)
    with store.transaction() as conn:
        added_answers = 0
        touched: set[str] = set()
        for a in document["answers"]:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO answers (uid, question_id, topic, answered_at, correct, rating, duration_ms,"
                " response) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (a["uid"], a["question_id"], a["topic"], iso(_moment(a["answered_at"])),
                 None if a["correct"] is None else int(a["correct"]), a["rating"], a["duration_ms"],
                 json.dumps(a["response"])))
            if cursor.rowcount:
                added_answers += 1
                touched.add(a["question_id"])
        added_grades = 0
        for g in document["grades"]:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO grades (uid, exercise_id, graded_at, file_path, file_hash, device, status,"
                " checks_passed, checks_total, duration_s, report) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (g["uid"], g["exercise_id"], iso(_moment(g["graded_at"])), g["file_path"], g["file_hash"], g["device"],
                 g["status"], g["checks_passed"], g["checks_total"], g["duration_s"],
                 None if g["report"] is None else json.dumps(g["report"])))
            added_grades += cursor.rowcount
        added_interviews = 0
        for i in document["interviews"]:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO interviews (uid, started_at, finished_at, minutes, score, report)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (i["uid"], iso(_moment(i["started_at"])), iso(_moment(i["finished_at"])), float(i["minutes"]),
                 float(i["score"]), json.dumps(i["report"])))
            added_interviews += cursor.rowcount
        added_events = 0
        for e in document.get("exercise_events", ()):  # files written before exercises were scheduled have none
            cursor = conn.execute("INSERT OR IGNORE INTO exercise_events (uid, exercise_id, kind, at) VALUES (?, ?, ?, ?)",
                                  (e["uid"], e["exercise_id"], e["kind"], iso(_moment(e["at"]))))
            added_events += cursor.rowcount
        added_marks = 0
        for m in document.get("question_marks", ()):  # files written before flags and suspension have none
            # One row per question: the later mark wins, so importing a file twice changes nothing.
            cursor = conn.execute(
                "INSERT INTO question_marks (question_id, flagged, note, suspended, updated_at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT(question_id) DO UPDATE SET flagged = excluded.flagged, note = excluded.note,"
                " suspended = excluded.suspended, updated_at = excluded.updated_at"
                " WHERE excluded.updated_at > question_marks.updated_at",
                (m["question_id"], int(m["flagged"]), m["note"] if m["flagged"] else None, int(m["suspended"]),
                 iso(_moment(m["updated_at"]))))
            added_marks += cursor.rowcount
        adopted = _adopt_parameters(conn, document["fsrs_parameters"])
        taken, kept = _adopt_settings(conn, document.get("settings") or {})
        parameters = fsrs_params.parse(_setting(conn, FSRS_PARAMETERS_KEY))
        recompute_cards(conn, sorted(touched), parameters)
    return ImportSummary(added_answers, added_grades, added_interviews, len(touched), adopted, added_events,
                         added_marks, taken, kept)


def _adopt_parameters(conn, parameters: list | None) -> bool:
    """A new machine takes the learner's fitted parameters along; a store with its own keeps them."""
    if parameters is None or _setting(conn, FSRS_PARAMETERS_KEY) is not None:
        return False
    conn.execute("INSERT INTO settings (key, value) VALUES (?, ?)", (FSRS_PARAMETERS_KEY, json.dumps(parameters)))
    return True


def _adopt_settings(conn, settings: dict) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int, int], ...]]:
    """The file's study settings, as its fitted parameters are taken: a store that never set one takes
    the file's; one the learner set here is kept (and reported when the file's differs). A value the
    same as this store's default writes nothing, so importing one's own export changes nothing."""
    taken, kept = [], []
    for name, value in settings.items():
        if name not in STUDY_SETTINGS:
            continue  # a setting of a later quizapp: not one this one knows how to use
        key, _ = STUDY_SETTINGS[name]
        own = _setting(conn, key)
        if own is not None and not _SETTING_CHECKS[name](own):  # set here (a damaged value is not)
            if own != value:
                kept.append((name, own, value))
            continue
        if value != STUDY_DEFAULTS[name]:
            conn.execute("INSERT INTO settings (key, value) VALUES (?, ?)", (key, json.dumps(value)))
            taken.append((name, value))
    return tuple(taken), tuple(kept)


def _setting(conn, key: str):
    row = conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
    return json.loads(row[0]) if row else None


def recompute_cards(conn, question_ids, parameters: tuple[float, ...] | None) -> None:
    """Replace each question's card by the one its whole review log gives (inside the caller's transaction)."""
    for question_id in question_ids:
        _recompute_card(conn, question_id, parameters)


def _recompute_card(conn, question_id: str, parameters) -> None:
    from quizapp.study.schedule import replay_card

    rows = conn.execute("SELECT answered_at, uid, rating, topic FROM answers WHERE question_id = ?",
                        (question_id,)).fetchall()
    # Time order, uid breaking ties: the same sequence on every machine whatever the row ids.
    rows.sort(key=lambda row: (datetime.fromisoformat(row[0]), row[1]))
    card_json, due = replay_card(question_id, [(datetime.fromisoformat(at), rating) for at, _, rating, _ in rows],
                                 parameters)
    last_at, topic = rows[-1][0], rows[-1][3]
    conn.execute(
        "INSERT INTO cards (question_id, topic, due, card, reviewed_at) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT(question_id) DO UPDATE SET topic = excluded.topic, due = excluded.due,"
        " card = excluded.card, reviewed_at = excluded.reviewed_at",
        (question_id, topic, iso(due), card_json, last_at))


# -- validation -----------------------------------------------------------------------------------

def validate(document) -> None:
    """Raise TransferError naming the first thing in the document this version cannot take."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise TransferError("not a quizapp progress export (no \"format\": \"quizapp-progress\" in it)")
    version = document.get("version")
    if _whole(1, MAX_WHOLE)(version):
        raise TransferError(f"damaged: \"version\" must be a whole number from 1, got {_shown(version)}")
    if version > FORMAT_VERSION:
        raise TransferError(f"written by a newer quizapp (format version {version}; this one reads up to "
                            f"{FORMAT_VERSION}); upgrade quizapp to import it")
    parameters = document.get("fsrs_parameters")
    if parameters is not None and (not isinstance(parameters, list) or not parameters
                                   or any(_number(-1e6, 1e6)(p) for p in parameters)):
        raise TransferError(f"damaged: \"fsrs_parameters\" must be null or a list of numbers, got {_shown(parameters)}")
    if "settings" in document:  # files written before study settings travelled have none
        problem = _settings(document["settings"])
        if problem:
            raise TransferError(f"damaged: \"settings\" {problem}")
    for section, fields in _SECTIONS.items():
        if section in _OPTIONAL_SECTIONS and section not in document:
            continue  # written by a quizapp before the section existed
        records = document.get(section)
        if not isinstance(records, list):
            raise TransferError(f"damaged: \"{section}\" must be a list")
        seen: set[str] = set()
        for index, record in enumerate(records):
            where = f"{section}[{index}]"
            if not isinstance(record, dict):
                raise TransferError(f"damaged: {where} must be an object")
            for name, check in fields.items():
                if name not in record:
                    raise TransferError(f"damaged: {where} has no \"{name}\"")
                problem = check(record[name])
                if problem:
                    raise TransferError(f"damaged: {where}.{name} {problem}, got {_shown(record[name])}")
            key = record.get("uid", record.get("question_id", record.get("exercise_id")))
            if key in seen:
                raise TransferError(f"damaged: {where} repeats the id {_shown(key)}")
            seen.add(key)


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _shown(value) -> str:
    """A value as a message quotes it: short, and without walking a deeply nested or huge value."""
    if isinstance(value, str):
        return repr(value[:60]) + (f"... ({len(value):,} characters)" if len(value) > 60 else "")
    if isinstance(value, list):
        return f"a list of {len(value):,} values"
    if isinstance(value, dict):
        return f"an object of {len(value):,} keys"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_WHOLE:
        return f"a number of {len(str(abs(value))):,} digits"
    return repr(value)[:80]


def _encodable(value: str) -> bool:
    """No lone surrogate (JSON's \\ud800 escapes allow them): SQLite and the export write UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _text(value) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return "must be a non-empty string"
    return None if _encodable(value) else "must be text without lone surrogate escapes"


def _uid(value) -> str | None:
    return None if isinstance(value, str) and 8 <= len(value) <= 64 and value.isprintable() and _encodable(value) \
        else "must be an id of 8 to 64 characters"


def _time(value) -> str | None:
    if not isinstance(value, str):
        return "must be an ISO 8601 time"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return "must be an ISO 8601 time"
    if moment.tzinfo is None:
        return "must be an ISO 8601 time with its UTC offset"
    try:
        in_range = EARLIEST <= moment < LATEST
    except OverflowError:
        in_range = False
    return None if in_range else f"must be a time from {EARLIEST.year} to {LATEST.year - 1}"


def _optional(check):
    return lambda value: None if value is None else check(value)


def _number(low: float, high: float):
    def check(value) -> str | None:
        if isinstance(value, int) and not isinstance(value, bool):  # compared exactly: never made a float
            ok = -MAX_WHOLE <= value <= MAX_WHOLE
        else:
            ok = isinstance(value, float) and math.isfinite(value)
        if ok and low <= value <= high:
            return None
        return f"must be a number from {low:g} to {min(high, MAX_WHOLE):.3g}"
    return check


def _whole(low: int, high: int = MAX_WHOLE):
    def check(value) -> str | None:
        ok = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
        return None if ok else f"must be a whole number from {low} to {high if high < MAX_WHOLE else '2^63 - 1'}"
    return check


def _boolean(value) -> str | None:
    return None if isinstance(value, bool) else "must be true, false or null"


def _free_form(value) -> str | None:
    """Any JSON value nested at most MAX_NESTING levels (deeper, reading it back would overflow the stack)."""
    pending = [(value, 1)]
    while pending:
        item, level = pending.pop()
        if level > MAX_NESTING:
            return f"must not nest more than {MAX_NESTING} levels deep"
        if isinstance(item, dict):
            pending.extend((part, level + 1) for pair in item.items() for part in pair)
        elif isinstance(item, list):
            pending.extend((part, level + 1) for part in item)
    return None


def _object(value) -> str | None:
    return _free_form(value) if isinstance(value, dict) else "must be an object"


def _anything(value) -> str | None:
    return _free_form(value)


def _note(value) -> str | None:
    if not isinstance(value, str) or len(value) > 10_000:
        return "must be text of at most 10,000 characters"
    return None if _encodable(value) else "must be text without lone surrogate escapes"


def _event_kind(value) -> str | None:
    return None if value in EXERCISE_EVENT_KINDS else f"must be one of {', '.join(EXERCISE_EVENT_KINDS)}"


def _settings(value) -> str | None:
    """An object of study settings; the ones this quizapp knows must hold values it takes."""
    if not isinstance(value, dict):
        return "must be an object"
    for name, check in _SETTING_CHECKS.items():
        if name in value and (problem := check(value[name])):
            return f"has \"{name}\" that {problem}, got {_shown(value[name])}"
    return _free_form(value)


def _status(value) -> str | None:
    return None if value in ("pass", "fail", "error") else "must be pass, fail or error"


_SECTIONS = {
    "answers": {
        "uid": _uid, "question_id": _text, "topic": _text, "answered_at": _time, "correct": _optional(_boolean),
        "rating": _whole(1, 4), "duration_ms": _optional(_whole(0)), "response": _anything,
    },
    "cards": {"question_id": _text, "card": _object},
    "grades": {
        "uid": _uid, "exercise_id": _text, "graded_at": _time, "status": _status, "checks_passed": _whole(0),
        "checks_total": _whole(0), "device": _optional(_text), "duration_s": _optional(_number(0, math.inf)),
        "file_path": _optional(_text), "file_hash": _optional(_text), "report": _optional(_object),
    },
    "interviews": {
        "uid": _uid, "started_at": _time, "finished_at": _time, "minutes": _number(0, 24 * 60),
        "score": _number(0, 1), "report": _object,
    },
    "exercise_events": {"uid": _uid, "exercise_id": _text, "kind": _event_kind, "at": _time},
    "exercises": {"exercise_id": _text},  # for readers; an import replays the grades instead
    "question_marks": {"question_id": _text, "flagged": _boolean, "note": _optional(_note), "suspended": _boolean,
                       "updated_at": _time},
}
# Sections a file of the same format version may lack (older writers): absent reads as empty.
_OPTIONAL_SECTIONS = {"exercise_events", "exercises", "question_marks"}

# The study settings an export carries: the name in the file -> (the store's key, how to read it).
# Names are the `quizapp config` verbs' (new-per-day), in the file's snake case.
STUDY_SETTINGS = {"new_per_day": (NEW_PER_DAY_KEY, Store.new_per_day)}
STUDY_DEFAULTS = {"new_per_day": DEFAULT_NEW_PER_DAY}
_SETTING_CHECKS = {"new_per_day": _whole(0, MAX_NEW_PER_DAY)}
