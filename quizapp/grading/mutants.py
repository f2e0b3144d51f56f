"""Buggy solutions as data: each one says in its header what its grade must show.

A buggy solution (tests/grader/buggy/<exercise>/<name>.py in a source checkout) is a solution written
wrong on purpose, to prove that the checks catch the mistake and say what it is. Its first line is the
exercise marker; the comment lines right after it are its header, one expectation per line:

    # quizapp: exercise=lora
    # expect: fail lora-shapes: "freeze them"
    # expect: may-not-pass lora-forward lora-merge
    # expect: says lora-merge: "changed the LoRALinear" "moved by up to"

Keywords (CHECK is a check id; WORDS are one or more JSON string literals, after a colon):

    pass                      a correct solution written another way: every check passes
    fail CHECK... [: WORDS]   each check fails, with a message of its own that holds a number
    error CHECK... [: WORDS]  each check stops on an error the solution raised
    skip CHECK... [: WORDS]   each check is skipped: what it judges never happened
    may-not-pass CHECK...     each check may fail, error or skip (a consequence of the bug)
    says CHECK: WORDS         the check's message holds every one of WORDS
    lacks CHECK: WORDS        the check's message holds none of WORDS (a cause the bug does not have)
    starts CHECK: WORDS       the check's message starts with WORDS (one string)
    no-number CHECK...        the failing check's message need not hold a number
    checks CHECK...           the grade reports exactly these checks, in this order (a second line
                              goes on with the list)
    device cpu|cuda           grade on that device rather than the default

Every check not named by fail, error, skip or may-not-pass must pass: a header says everything the grade
may do wrong. `says`, `lacks` and `starts` take `*` for every check of the report. Words after a
status keyword belong to its one check (`fail add-lora-twice: "and 1 more"`).

The same lines, in a file of their own (starter.expect beside the buggy solutions), say what the
exercise's starter must show.

This module reads headers and judges reports against them, for the tests (tests/grader/test_mutants.py)
and for `quizapp exercises check`; it runs nothing itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

PREFIX = "# expect:"
STARTER_FILE = "starter.expect"
STATUS_KEYWORDS = ("fail", "error", "skip", "may-not-pass")
KEYWORDS = ("pass", *STATUS_KEYWORDS, "says", "lacks", "starts", "no-number", "checks", "device")
EVERY = "*"
# The solution that runs nothing (every exercise has one: tests/grader/test_does_nothing.py) fails many
# checks at once and targets none of them: it does not count towards "every check is failed by some
# buggy solution", which asks for a solution written for each check.
NOT_COUNTED = {"does_nothing"}
INTERNAL = "internal grader error"
_CHECK_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_EXPECT_LIKE = re.compile(r"^\s*#\s*expect\b", re.IGNORECASE)
_DIGIT = re.compile(r"\d")


class HeaderError(ValueError):
    """A header that does not read: the message names the file and the line."""


@dataclass
class Expectation:
    """What one solution's grade must show, as its header says."""

    source: str  # the file it was read from, for messages
    passes: bool = False
    status: dict[str, str] = field(default_factory=dict)  # check id -> fail | error | skip | may-not-pass
    says: dict[str, list[str]] = field(default_factory=dict)
    lacks: dict[str, list[str]] = field(default_factory=dict)
    starts: dict[str, str] = field(default_factory=dict)
    no_number: set[str] = field(default_factory=set)
    checks: list[str] | None = None
    device: str | None = None
    mentions: list[tuple[int, str]] = field(default_factory=list)  # (line, check id) as written

    @property
    def fails(self) -> set[str]:
        """The checks this solution exists to fail: what counts towards "every check is failed by some bug"."""
        return {cid for cid, status in self.status.items() if status == "fail"}


def _numbered_lines(text: str, source: str, whole_file: bool) -> list[tuple[int, str]]:
    """(line number, text) of the `# expect:` lines: in a solution, the comment lines right after its
    first line (an expect line further down is out of place); in a file of their own, every line."""
    numbered = []
    in_header = not whole_file
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if number == 1 and not whole_file:
            continue
        in_header = in_header and line.startswith("#")
        if not _EXPECT_LIKE.match(line):
            if whole_file and line and not line.startswith("#"):
                raise HeaderError(f"{source}:{number}: not a comment or an `{PREFIX}` line: {line[:80]!r}")
            continue
        if not whole_file and not in_header:
            raise HeaderError(f"{source}:{number}: an `{PREFIX}` line below the header: move it up, into the "
                              "comment lines right under the first line")
        numbered.append((number, line))
    return numbered


def parse(text: str, source: str = "<header>", *, whole_file: bool = False) -> Expectation:
    """The expectation written in `text`: a solution's source (its header follows the marker line) or,
    with `whole_file`, a file of `# expect:` lines and comments alone (starter.expect).

    Raises HeaderError for a header that is missing, a keyword it does not know, a line it cannot read,
    or two statements that contradict each other."""
    numbered = _numbered_lines(text, source, whole_file)
    if not numbered:
        raise HeaderError(f"{source}: no `{PREFIX}` header: say what this solution's grade must show "
                          f"(`{PREFIX} fail CHECK`, or `{PREFIX} pass` for a correct one)")
    expect = Expectation(source)
    for number, line in numbered:
        _read_line(expect, number, line)
    if not expect.passes and not expect.status:
        raise HeaderError(f"{source}: the header names no status: add `{PREFIX} pass`, or the checks this "
                          "solution fails (fail, error, skip, may-not-pass)")
    if expect.passes and (expect.no_number or expect.says or expect.lacks or expect.starts):
        raise HeaderError(f"{source}: `pass` leaves no failing message to read: drop the says/lacks/starts/"
                          "no-number lines")
    for cid in expect.no_number:
        if expect.status.get(cid) != "fail":
            raise HeaderError(f"{source}: no-number {cid}: only a check the header says fails has a message to count")
    return expect


def _read_line(expect: Expectation, number: int, line: str) -> None:
    where = f"{expect.source}:{number}"
    if not line.startswith(PREFIX):
        raise HeaderError(f"{where}: write the line as `{PREFIX} KEYWORD ...` (lower case, one space after #)")
    body = line[len(PREFIX):].strip()
    head, colon, tail = body.partition(":")
    words = _strings(tail, where) if colon else []
    if colon and not words:
        raise HeaderError(f"{where}: nothing after the colon: give the words as quoted strings, or drop the colon")
    keyword, *ids = head.split()
    if keyword not in KEYWORDS:
        raise HeaderError(f"{where}: unknown keyword {keyword!r} (known: {', '.join(KEYWORDS)})")
    if keyword == "device":
        if ids not in (["cpu"], ["cuda"]) or colon:
            raise HeaderError(f"{where}: write `{PREFIX} device cpu` or `{PREFIX} device cuda`")
        expect.device = ids[0]
        return
    if keyword == "pass":
        if ids or colon:
            raise HeaderError(f"{where}: `pass` takes nothing: every check passes")
        if expect.status:
            raise HeaderError(f"{where}: `pass` and a failing check in one header")
        expect.passes = True
        return
    for cid in ids:
        if cid == EVERY and keyword in ("says", "lacks", "starts"):
            continue
        if not _CHECK_ID.match(cid):
            raise HeaderError(f"{where}: {cid!r} is not a check id (lower case, digits and dashes)")
        expect.mentions.append((number, cid))
    if not ids:
        raise HeaderError(f"{where}: `{keyword}` names no check")
    if keyword == "checks":
        if colon:
            raise HeaderError(f"{where}: `checks` takes check ids alone")
        expect.checks = [*(expect.checks or []), *ids]
        return
    if keyword == "no-number":
        if colon:
            raise HeaderError(f"{where}: `no-number` takes check ids alone")
        expect.no_number.update(ids)
        return
    if keyword in STATUS_KEYWORDS:
        if expect.passes:
            raise HeaderError(f"{where}: `pass` and a failing check in one header")
        for cid in ids:
            if expect.status.get(cid, keyword) != keyword:
                raise HeaderError(f"{where}: {cid} is both {expect.status[cid]} and {keyword}")
            expect.status[cid] = keyword
        if not colon:
            return
        keyword = "says"
    if not colon:
        raise HeaderError(f"{where}: `{keyword}` needs its words after a colon: `{keyword} {ids[0]}: \"...\"`")
    if len(ids) != 1:
        raise HeaderError(f"{where}: words belong to one check; write a line for each of {', '.join(ids)}")
    cid = ids[0]
    if keyword == "starts":
        if len(words) != 1 or cid in expect.starts:
            raise HeaderError(f"{where}: a message starts one way: one string, on one `starts` line per check")
        expect.starts[cid] = words[0]
    else:
        getattr(expect, keyword).setdefault(cid, []).extend(words)


def _strings(text: str, where: str) -> list[str]:
    decoder = json.JSONDecoder()
    out, i = [], 0
    while True:
        while i < len(text) and text[i] in " \t":
            i += 1
        if i == len(text):
            return out
        if text[i] != '"':
            raise HeaderError(f"{where}: expected a double-quoted string at {text[i:i + 30]!r}")
        try:
            value, i = decoder.raw_decode(text, i)
        except ValueError as exc:
            raise HeaderError(f"{where}: a string that does not read ({exc.msg}): {text[i:i + 40]!r}") from None
        if not value:
            raise HeaderError(f"{where}: an empty string says nothing")
        out.append(value)


def read(path: Path) -> Expectation:
    """The header of the solution at `path` (or a starter.expect file)."""
    text = path.read_text(encoding="utf-8")
    return parse(text, path.name, whole_file=path.name == STARTER_FILE)


def unknown_checks(expect: Expectation, check_ids: Iterable[str]) -> list[str]:
    """The header's mentions of checks the exercise does not have (ids of the reference's report)."""
    check_ids = list(check_ids)
    known = set(check_ids)
    return [f"{expect.source}:{line}: {cid!r} is not a check of this exercise (its checks: {', '.join(check_ids)})"
            for line, cid in expect.mentions if cid not in known]


def judge(expect: Expectation, status: str, checks: Sequence, message: str | None = None) -> list[str]:
    """What in a grade (its status, message, and checks as (id, status, message) triples or objects with
    those attributes) goes against `expect`; empty when the header holds."""
    seen = [_triple(c) for c in checks]
    by_id = {cid: (st, msg) for cid, st, msg in seen}
    problems: list[str] = []
    if expect.checks is not None and [cid for cid, _, _ in seen] != expect.checks:
        problems.append(f"the grade reported the checks {[cid for cid, _, _ in seen]}, expected {expect.checks}")
    internal = [cid for cid, _, msg in seen if INTERNAL in msg]
    if internal or INTERNAL in (message or ""):
        problems.append(f"an internal grader error in {', '.join(internal) or 'the grade'}")
    if expect.passes:
        wrong = [f"{cid}: {st} ({_short(msg)})" for cid, st, msg in seen if st != "pass"]
        if status != "pass" or wrong or not seen:
            problems.append(f"expected every check to pass, the grade is {status}"
                            + (f": {message}" if message else "") + (f"; {'; '.join(wrong)}" if wrong else ""))
        return problems
    if status != "fail":
        problems.append(f"expected a grade that fails, got {status}" + (f": {message}" if message else ""))
        if not seen:
            return problems
    for cid, wanted in expect.status.items():
        if cid not in by_id:
            problems.append(f"{cid}: not in the report")
            continue
        st, msg = by_id[cid]
        if wanted != "may-not-pass" and st != wanted:
            problems.append(f"{cid}: expected {wanted}, got {st}" + (f" ({_short(msg)})" if msg else ""))
        if wanted in ("fail", "error") and st == wanted and not msg.strip():
            problems.append(f"{cid}: {'fails' if wanted == 'fail' else 'errors'} with no message")
        elif wanted == "fail" and st == "fail" and cid not in expect.no_number and not _DIGIT.search(msg):
            problems.append(f"{cid}: the message holds no number: {_short(msg)}")
    for cid, st, msg in seen:
        if cid not in expect.status and st != "pass":
            problems.append(f"{cid}: expected pass, got {st} ({_short(msg)})")
    for cid, words in expect.says.items():
        for tid, msg in _targets(cid, by_id, problems):
            missing = [w for w in words if w not in msg]
            if missing:
                problems.append(f"{tid}: the message lacks {_quoted(missing)}: {_short(msg, 600)}")
    for cid, words in expect.lacks.items():
        for tid, msg in _targets(cid, by_id, problems):
            present = [w for w in words if w in msg]
            if present:
                problems.append(f"{tid}: the message holds {_quoted(present)}, which it must not: {_short(msg, 600)}")
    for cid, start in expect.starts.items():
        for tid, msg in _targets(cid, by_id, problems):
            if not msg.startswith(start):
                problems.append(f"{tid}: the message does not start with {_quoted([start])}: {_short(msg, 600)}")
    return problems


def _targets(cid: str, by_id: Mapping[str, tuple[str, str]], problems: list[str]):
    if cid == EVERY:
        return [(tid, msg) for tid, (_, msg) in by_id.items()]
    if cid not in by_id:
        problems.append(f"{cid}: not in the report")
        return []
    return [(cid, by_id[cid][1])]


def _triple(check) -> tuple[str, str, str]:
    if isinstance(check, Mapping):
        return str(check["id"]), str(check["status"]), str(check.get("message") or "")
    if isinstance(check, tuple):
        return check
    return check.id, check.status, check.message or ""


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def _quoted(words: Sequence[str]) -> str:
    return ", ".join(json.dumps(w, ensure_ascii=False) for w in words)


def unfailed(expectations: Iterable[Expectation], check_ids: Sequence[str]) -> list[str]:
    """The checks, in the exercise's order, that no buggy solution's header says it fails."""
    failed = set().union(*(e.fails for e in expectations))
    return [cid for cid in check_ids if cid not in failed]


def buggy_root(exercises_dir: Path) -> Path:
    """Where a source checkout keeps the buggy solutions of the exercises in `exercises_dir`
    (an installed wheel has none)."""
    return exercises_dir.parent / "tests" / "grader" / "buggy"


def buggy_files(folder: Path) -> list[Path]:
    """The buggy solutions of one exercise, by name; sub-folders are driven by their own tests."""
    return sorted(folder.glob("*.py")) if folder.is_dir() else []
