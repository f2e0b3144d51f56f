"""Checking a learner's answer against a question. Never raises: a malformed answer is wrong."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from quizapp.bank.model import Question

_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$")


@dataclass(frozen=True)
class Verdict:
    correct: bool | None  # None for a card: the learner rates themselves
    expected: str  # the right answer, as the learner should see it
    note: str = ""  # why an answer could not be read, if it could not


def normalise_text(text: str) -> str:
    """Case-insensitive, trimmed, inner white space collapsed."""
    return " ".join(text.split()).casefold()


def parse_number(text) -> float | None:
    """A finite number from what a learner types: 65504, 65,504, 6.1e-5, 2^-14, 2**-14, 1/3."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return float(text) if math.isfinite(text) else None
    if not isinstance(text, str):
        return None
    s = text.strip().replace("_", "").replace(" ", "")
    if _THOUSANDS.match(s):
        s = s.replace(",", "")
    try:
        for op in ("**", "^", "/"):
            if op in s:
                left, _, right = s.partition(op)
                a, b = float(left), float(right)
                value = a**b if op != "/" else a / b
                break
        else:
            value = float(s)
    except (ValueError, OverflowError, ZeroDivisionError, TypeError):
        return None
    if isinstance(value, complex) or not math.isfinite(value):
        return None
    return float(value)


def expected_answer(q: Question) -> str:
    # Choices are shown shuffled, so the right ones are named by their text, never by a number.
    if q.type == "single":
        return q.choices[q.answer]
    if q.type == "multi":
        return "; ".join(q.choices[i] for i in q.answer)
    if q.type == "numeric":
        shown = f"{q.answer:g}" if abs(q.answer) < 1e16 else repr(q.answer)
        if not q.tolerance or not q.answer:  # relative to 0, any tolerance accepts 0 alone
            return shown
        accepted = accepted_range(q.answer, q.tolerance)
        return shown + (f" (accepted: {accepted[0]} to {accepted[1]})" if accepted else
                        f" (within {q.tolerance:.3g} relative)")
    if q.type == "text":
        return " / ".join(q.answer)
    if q.type == "order":
        return " -> ".join(q.items)
    return "(see the model answer)"


def accepted_range(answer: float, tolerance: float) -> tuple[str, str] | None:
    """The numbers a relative tolerance accepts around `answer`, in the answer's own units, rounded
    inwards to the digits where the range shows (so both ends are accepted); None for an exact answer
    (and for a tolerance finer than the float's precision).

    A prompt asks for "two decimals" or "a plain number", never for a relative error: the learner
    reads "0.995 to 1.005", not "within 0.005 relative".
    """
    spread = abs(answer) * tolerance
    if not spread or not math.isfinite(spread) or abs(answer) >= 1e16:
        return None
    exponent = math.floor(math.log10(spread))
    step = 10.0 ** exponent
    low = _end(math.ceil((answer - spread) / step - 1e-6), 1, answer, tolerance, exponent)
    high = _end(math.floor((answer + spread) / step + 1e-6), -1, answer, tolerance, exponent)
    return (low, high) if low is not None and high is not None else None


def _end(k: int, inwards: int, answer: float, tolerance: float, exponent: int) -> str | None:
    """The end `k * 10**exponent` as printed, moved inwards until the checker accepts it as typed
    (None if a few steps do not get there: a tolerance finer than the float's own precision)."""
    for _ in range(25):
        text = _number(k * 10.0 ** exponent, exponent)
        if _within(float(text), answer, tolerance):
            return text
        k += inwards
    return None


def _number(value: float, exponent: int) -> str:
    """`value` to the digit of 10**exponent: fixed point, or in e-notation when that would be long."""
    fixed = f"{value:.{max(0, -exponent)}f}"
    if len(fixed) <= 18:
        return fixed
    magnitude = math.floor(math.log10(abs(value))) if value else exponent
    return f"{value:.{max(0, magnitude - exponent)}e}"


def _within(value: float, answer: float, tolerance: float) -> bool:
    # A hair of slack, so that a bound typed in decimal (0.995 for 1 within 0.005) is not refused
    # because its binary value lies a rounding error outside; a tolerance of 0 stays exact.
    return math.isclose(value, answer, rel_tol=tolerance * (1 + 1e-9), abs_tol=0.0)


def check_answer(q: Question, response) -> Verdict:
    """Whether `response` answers `q`.

    single: a 0-based index; multi: indices; numeric: a number or text; text: text;
    order: the indices of `q.items` in the order the learner put them; card: anything.
    """
    expected = expected_answer(q)
    try:
        checker = _CHECKERS[q.type]
    except KeyError:
        return Verdict(False, expected, f"unknown question type {q.type!r}")
    correct, note = checker(q, response)
    return Verdict(correct, expected, note)


def _index(value, n: int) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdecimal():
        value = int(value.strip())
    if isinstance(value, int) and 0 <= value < n:
        return value
    return None


def _single(q, response):
    index = _index(response, len(q.choices))
    if index is None:
        return False, f"not a choice: {response!r}"
    return index == q.answer, ""


def _indices(response, n: int) -> list[int] | None:
    if isinstance(response, (str, bytes)) or not hasattr(response, "__iter__"):
        return None
    try:
        values = list(response)
    except Exception:  # noqa: BLE001 - any iterable the caller passes
        return None
    indices = [_index(v, n) for v in values]
    return None if any(i is None for i in indices) else indices


def _multi(q, response):
    indices = _indices(response, len(q.choices))
    if indices is None:
        return False, f"not a set of choices: {response!r}"
    return set(indices) == set(q.answer), ""


def number_readings(text) -> tuple[float, ...]:
    """What a typed number can mean: one value, or for "33%" both 33 and 0.33; () if not a number.

    The prompt says whether it wants a percentage or a fraction; either way "33%" names the quantity.
    """
    if isinstance(text, str) and text.strip().endswith("%"):
        value = parse_number(text.strip().removesuffix("%"))
        return () if value is None else (value, value / 100)
    value = parse_number(text)
    return () if value is None else (value,)


_WITH_WORDS = re.compile(r"^\s*([+-]?[\d.,_]+(?:e[+-]?\d+)?)\s*([^\W\d_].*?)\s*$", re.IGNORECASE)
NOT_A_NUMBER = "That is not a number: type digits like 65504 or 6.5e4 (2^-14, 1/3 and 25% work too)"


def numeric_problem(text) -> str | None:
    """Why a numeric answer cannot be read, as a sentence to show before asking again; None when it can.

    The rule is the checker's own: whatever `number_readings` reads (65504, 65,504, 6.1e-5, 2^-14,
    1/3, 25%) is a number, so a reply this accepts is always checked, never counted wrong unread.
    A number followed by a unit or words ("1 GiB") is asked again without them.
    """
    if number_readings(text):
        return None
    match = _WITH_WORDS.match(text) if isinstance(text, str) else None
    if match and number_readings(match.group(1)):
        return f"{NOT_A_NUMBER}; type the number alone, without '{match.group(2)}'."
    return NOT_A_NUMBER + "."


def _numeric(q, response):
    readings = number_readings(response)
    if not readings:
        return False, f"not a number: {response!r}"
    return any(_within(v, q.answer, q.tolerance) for v in readings), ""


def _text(q, response):
    if not isinstance(response, str):
        return False, f"not text: {response!r}"
    given = normalise_text(response)
    return any(given == normalise_text(a) for a in q.answer), ""


def _order(q, response):
    indices = _indices(response, len(q.items))
    if indices is None or sorted(indices) != list(range(len(q.items))):
        return False, "not an arrangement of every item exactly once"
    return indices == list(range(len(q.items))), ""


def _card(q, response):
    return None, ""


_CHECKERS = {"single": _single, "multi": _multi, "numeric": _numeric, "text": _text,
             "order": _order, "card": _card}
