"""`quizapp flag`, `quizapp suspend`, `quizapp unsuspend`: the learner's marks on a question, and
`quizapp config new-per-day N`: the daily limit of new questions."""

from __future__ import annotations

import re

import click

from quizapp.commands.common import fail, load_bank_reporting, open_store

MAX_NOTE = 2000  # characters of a flag's note
MAX_NEW_PER_DAY = 10_000


def unknown_question(question_id: str, bank) -> int:
    from quizapp.bank.search import search

    near = [h.question.id for h in search(bank, question_id.replace("-", " "), limit=3)]
    hint = f" Did you mean {', '.join(near)}?" if near else ""
    return fail(f"no question '{question_id}' in the bank.{hint} Find a question's id with "
                f"`quizapp search WORDS`.", 2)


def mark_question(question_id: str, *, flagged: bool | None = None, note: str | None = None,
                  suspended: bool | None = None) -> int:
    if note is not None and len(note) > MAX_NOTE:
        return fail(f"a note is at most {MAX_NOTE} characters (this one has {len(note)})", 2)
    store = open_store()
    if store is None:
        return 1
    with store:
        bank = load_bank_reporting()
        question = bank.questions.get(question_id)
        if question is None:
            return unknown_question(question_id, bank)
        before = store.marks().get(question_id)
        mark = store.set_mark(question_id, flagged=flagged, note=note, suspended=suspended)
    if suspended is not None:
        was = bool(before and before.suspended)
        if suspended:
            click.echo(f"{question_id} is already suspended." if was else
                       f"Suspended {question_id}: it is in no session, interview or due count until "
                       f"`quizapp unsuspend {question_id}`.")
        else:
            click.echo(f"Unsuspended {question_id}: it is studied again." if was else
                       f"{question_id} was not suspended.")
    elif flagged:
        click.echo(f"Flagged {question_id}" + (f": {mark.note}" if mark.note else "")
                   + " (`quizapp stats --flags` lists your flags).")
    else:
        click.echo(f"Cleared the flag of {question_id}." if before and before.flagged else
                   f"{question_id} was not flagged.")
    return 0


def whole_number(text: str) -> int | None:
    """`text` as a whole number (sign and surrounding spaces allowed), or None. Beyond 18 digits it
    stands at ±10**18: larger than any setting, and int() refuses a few thousand digits."""
    match = re.fullmatch(r"\s*([+-]?)([0-9]+)\s*", text)
    if match is None:
        return None
    sign, digits = match.groups()
    value = int(digits) if len(digits.lstrip("0")) <= 18 else 10**18
    return -value if sign == "-" else value


def set_new_per_day(text: str | None) -> int:
    """Set the daily limit from N as typed (None: print it)."""
    from quizapp.study.limits import new_today
    from quizapp.study.store import NEW_PER_DAY_KEY, utcnow

    value = None if text is None else whole_number(text)
    if text is not None and (value is None or value < 0):
        typed = text if len(text) <= 40 else text[:40] + "..."
        return fail(f"new-per-day takes a whole number from 0 up, e.g. 10 (not {typed!r}).", 2)
    if value is not None and value > MAX_NEW_PER_DAY:
        return fail(f"new-per-day is at most {MAX_NEW_PER_DAY:,} (not {text.strip()[:40]}).", 2)
    store = open_store()
    if store is None:
        return 1
    with store:
        if value is not None:
            store.set_setting(NEW_PER_DAY_KEY, value)
        today = new_today(store, utcnow())
    if value is None:
        click.echo(f"new-per-day = {today.limit} ({today.taken} new today, {today.left} left)")
    else:
        click.echo(f"At most {today.limit} new questions a day from now on ({today.taken} new today, "
                   f"{today.left} left).")
    return 0
