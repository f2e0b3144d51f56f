"""Strict validation of one question file, node by node, with a line for every error."""

from __future__ import annotations

import math
import re
from pathlib import Path

import yaml

from quizapp.bank.codewidth import CODE_WIDTH, wide_code_lines
from quizapp.bank.model import QUESTION_TYPES, BankError, Question, Topic
from quizapp.bank.yamlnodes import line_of, scalar_value
from quizapp.words import plural

SLUG = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")
FILE_KEYS = ("topic", "title", "questions")
COMMON_REQUIRED = ("id", "type", "difficulty", "prompt", "explanation")
COMMON_OPTIONAL = ("tags",)
# type -> (required keys, optional keys) beyond the common ones
TYPE_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "single": (("choices", "answer"), ("why_not",)),
    "multi": (("choices", "answer"), ("why_not",)),
    "numeric": (("answer",), ("tolerance",)),
    "text": (("answer",), ()),
    "order": (("items",), ()),
    "card": ((), ("key_points",)),
}
ALL_QUESTION_KEYS = set(COMMON_REQUIRED) | set(COMMON_OPTIONAL) | {
    key for req, opt in TYPE_KEYS.values() for key in req + opt
}
MIN_CHOICES, MAX_CHOICES = 2, 8
MAX_KEY_POINTS = 8
MAX_SHOWN = 60  # characters of a value quoted in a message


def describe(value) -> str:
    """A value's YAML type in the words of someone writing the file."""
    if isinstance(value, bool):
        return "a boolean (yes/no/true/false; quote it if you meant text)"
    if value is None:
        return "nothing (null)"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def shown(value) -> str:
    """A value as a message quotes it, in bounded time and length: a short repr, text cut after
    MAX_SHOWN characters, and a list or mapping only by its kind and length (its repr would walk
    every copy an alias made: see yamlnodes.MAX_EXPANDED_VALUES)."""
    if isinstance(value, (str, bytes)):
        text = repr(value[:MAX_SHOWN])
        unit = "characters" if isinstance(value, str) else "bytes"
        return text if len(value) <= MAX_SHOWN else f"{text}... ({len(value):,} {unit})"
    if isinstance(value, (list, tuple, dict, set)):
        return f"{describe(value)} of {plural(len(value), 'entry', 'entries')}"
    if is_int(value) and abs(value) >= 10**MAX_SHOWN:
        return f"an integer of {len(str(abs(value))):,} digits"
    return repr(value)[:MAX_SHOWN * 2]


def is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value) -> bool:
    return (is_int(value) or isinstance(value, float)) and math.isfinite(value)


class FileValidator:
    """Validates one file's root node; collects every error instead of stopping at the first."""

    def __init__(self, path: Path, loader):
        self.path = path
        self.loader = loader
        self.errors: list[BankError] = []
        self.warnings: list[BankError] = []  # worth fixing, but the file loads and counts as valid

    def error(self, node_or_line, reason: str) -> None:
        line = node_or_line if isinstance(node_or_line, int) else line_of(node_or_line)
        self.errors.append(BankError(self.path, line, reason))

    def warn_wide_code(self, node: yaml.Node, text: str) -> None:
        """A warning for each code line of `text` wider than CODE_WIDTH, at its own line in the file.

        Only a literal block (`|`) keeps the file's lines one for one; in any other style the code's
        lines are counted from where the value starts.
        """
        literal = getattr(node, "style", None) == "|"  # its text starts on the line after the `|`
        for wide in wide_code_lines(text):
            line = line_of(node) + 1 + wide.index if literal else line_of(node)
            self.warnings.append(BankError(self.path, line, f"warning: code line is {wide.width} columns wide; "
                                                            f"up to {CODE_WIDTH} fit an 80-column terminal unwrapped"))

    def mapping(self, node, what: str, allowed) -> dict[str, tuple[yaml.Node, yaml.Node]] | None:
        """Key -> (key node, value node), reporting non-mappings, duplicate and unknown keys."""
        if not isinstance(node, yaml.MappingNode):
            self.error(node, f"{what} must be a mapping of keys, got {describe(scalar_value(self.loader, node))}")
            return None
        out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            key = scalar_value(self.loader, key_node) if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str):
                self.error(key_node, f"{what} has a key that is not text")
                continue
            if key in out:
                self.error(key_node, f"duplicate key {shown(key)} in {what} (first at line {line_of(out[key][0])})")
                continue
            if key not in allowed:
                self.error(key_node, self.unknown_key_reason(key, what, allowed))
                continue
            out[key] = (key_node, value_node)
        return out

    @staticmethod
    def unknown_key_reason(key: str, what: str, allowed) -> str:
        if key in ALL_QUESTION_KEYS:
            return f"key '{key}' is not allowed in {what}"
        return f"unknown key {shown(key)} in {what} (allowed: {', '.join(sorted(allowed))})"

    def value(self, node: yaml.Node):
        return scalar_value(self.loader, node)

    def text(self, node: yaml.Node, what: str) -> str | None:
        value = self.value(node)
        if not isinstance(value, str):
            self.error(node, f"{what} must be text, got {describe(value)}")
            return None
        if not value.strip():
            self.error(node, f"{what} must not be empty")
            return None
        self.warn_wide_code(node, value)
        return value

    def slug(self, node: yaml.Node, what: str) -> str | None:
        value = self.text(node, what)
        if value is not None and not SLUG.match(value):
            self.error(node, f"{what} {shown(value)} must be a slug: lowercase letters, digits, '-' or '_'")
            return None
        return value

    def text_list(self, node: yaml.Node, what: str, *, min_len: int, max_len: int | None = None,
                  unique: bool = True) -> tuple[str, ...] | None:
        if not isinstance(node, yaml.SequenceNode):
            self.error(node, f"{what} must be a list, got {describe(self.value(node))}")
            return None
        values = [self.text(item, f"{what}[{i}]") for i, item in enumerate(node.value)]
        if any(v is None for v in values):
            return None
        if len(values) < min_len or (max_len is not None and len(values) > max_len):
            bound = f"{min_len} to {max_len}" if max_len is not None else f"at least {min_len}"
            self.error(node, f"{what} must have {bound} entries, has {len(values)}")
            return None
        if unique:
            seen: dict[str, int] = {}
            for i, v in enumerate(values):
                if v.strip() in seen:
                    self.error(node.value[i], f"{what}[{i}] repeats {what}[{seen[v.strip()]}]")
                    return None
                seen[v.strip()] = i
        return tuple(values)

    # -- the file ---------------------------------------------------------------------------

    def topic(self, root: yaml.Node | None) -> Topic | None:
        if root is None:
            self.error(1, "empty file: expected the keys topic, title and questions")
            return None
        keys = self.mapping(root, "the file", FILE_KEYS)
        if keys is None:
            return None
        for key in FILE_KEYS:
            if key not in keys:
                self.error(root, f"missing key '{key}' at the top of the file")
        slug = self.slug(keys["topic"][1], "topic") if "topic" in keys else None
        title = self.text(keys["title"][1], "title") if "title" in keys else None
        questions: list[Question] = []
        if "questions" in keys:
            node = keys["questions"][1]
            if not isinstance(node, yaml.SequenceNode) or not node.value:
                self.error(node, "questions must be a non-empty list")
            else:
                ids: dict[str, int] = {}
                for item in node.value:
                    question = self.question(item, slug or "")
                    if question is None:
                        continue
                    if question.id in ids:
                        self.error(item, f"duplicate id '{question.id}' (first at line {ids[question.id]})")
                        continue
                    ids[question.id] = question.line
                    questions.append(question)
        if self.errors or slug is None or title is None:
            return None
        return Topic(slug=slug, title=title, source=self.path, questions=tuple(questions))

    # -- one question -------------------------------------------------------------------------

    def question(self, node: yaml.Node, topic: str) -> Question | None:
        errors_before = len(self.errors)
        qtype = self._peek_type(node)
        known = isinstance(qtype, str) and qtype in TYPE_KEYS  # a list or mapping is no type (nor hashable)
        allowed = set(COMMON_REQUIRED) | set(COMMON_OPTIONAL)
        if known:
            required, optional = TYPE_KEYS[qtype]
            allowed |= set(required) | set(optional)
        else:
            allowed = ALL_QUESTION_KEYS  # the type is wrong: do not also flag every other key
        keys = self.mapping(node, f"a {qtype} question" if known else "a question", allowed)
        if keys is None:
            return None
        ident = self.slug(keys["id"][1], "id") if "id" in keys else None
        where = f"question {shown(ident)}" if ident else "a question"
        required = COMMON_REQUIRED + (TYPE_KEYS[qtype][0] if known else ())
        for key in required:
            if key not in keys:
                self.error(node, f"{where}: missing key '{key}'")
        fields: dict = {}
        if "type" in keys and not known:
            self.error(keys["type"][1], f"{where}: type must be one of {', '.join(QUESTION_TYPES)}, got {shown(qtype)}")
        if "difficulty" in keys:
            value_node = keys["difficulty"][1]
            value = self.value(value_node)
            if not is_int(value) or value not in (1, 2, 3):
                self.error(value_node, f"{where}: difficulty must be 1, 2 or 3, got {shown(value)}")
            else:
                fields["difficulty"] = value
        for key in ("prompt", "explanation"):
            if key in keys:
                fields[key] = self.text(keys[key][1], f"{where}: {key}")
        if "tags" in keys:
            tags = self.text_list(keys["tags"][1], f"{where}: tags", min_len=0)
            for i, tag in enumerate(tags or ()):
                if not SLUG.match(tag):
                    self.error(keys["tags"][1].value[i], f"{where}: tag {shown(tag)} must be a slug")
            fields["tags"] = tags or ()
        if known:
            getattr(self, f"_fields_{qtype}")(keys, where, fields)
        if len(self.errors) > errors_before or ident is None:
            return None
        return Question(id=ident, type=qtype, topic=topic, source=self.path, line=line_of(node), **fields)

    def _peek_type(self, node: yaml.Node):
        """The question's type as written (any YAML value); only text can name one of TYPE_KEYS."""
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.value == "type":
                    return self.value(value_node)
        return None

    def _choices(self, keys, where, fields) -> int | None:
        if "choices" not in keys:
            return None
        choices = self.text_list(keys["choices"][1], f"{where}: choices",
                                 min_len=MIN_CHOICES, max_len=MAX_CHOICES)
        if choices is None:
            return None
        fields["choices"] = choices
        return len(choices)

    def _index(self, node, value, n, what) -> bool:
        if not is_int(value):
            self.error(node, f"{what} must be a 0-based index (an integer), got {describe(value)}")
            return False
        if n is not None and not 0 <= value < n:
            self.error(node, f"{what} {shown(value)} is out of range: there are {n} choices (0 to {n - 1})")
            return False
        return True

    def _fields_single(self, keys, where, fields) -> None:
        n = self._choices(keys, where, fields)
        if "answer" in keys:
            node = keys["answer"][1]
            value = self.value(node)
            if self._index(node, value, n, f"{where}: answer"):
                fields["answer"] = value
        self._why_not(keys, where, fields, n)

    def _fields_multi(self, keys, where, fields) -> None:
        n = self._choices(keys, where, fields)
        if "answer" not in keys:
            return
        node = keys["answer"][1]
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            self.error(node, f"{where}: answer of a multi question must be a non-empty list of indices")
            return
        values = []
        for i, item in enumerate(node.value):
            value = self.value(item)
            if not self._index(item, value, n, f"{where}: answer[{i}]"):
                return
            if value in values:
                self.error(item, f"{where}: answer lists index {shown(value)} twice")
                return
            values.append(value)
        fields["answer"] = tuple(sorted(values))
        self._why_not(keys, where, fields, n)

    def _why_not(self, keys, where, fields, n: int | None) -> None:
        """`why_not`: a mapping from a wrong choice's index to one line on why it is wrong."""
        if "why_not" not in keys:
            return
        node = keys["why_not"][1]
        if not isinstance(node, yaml.MappingNode):
            self.error(node, f"{where}: why_not must be a mapping of choice index to text, "
                             f"got {describe(self.value(node))}")
            return
        answer = fields.get("answer")
        right = set(answer) if isinstance(answer, tuple) else {answer}
        lines: dict[int, str] = {}
        for key_node, value_node in node.value:
            index = self.value(key_node)
            if not self._index(key_node, index, n, f"{where}: why_not key"):
                continue
            if index in lines:
                self.error(key_node, f"{where}: why_not lists choice {index} twice")
                continue
            if index in right:
                self.error(key_node, f"{where}: why_not names choice {index}, which is a right answer")
                continue
            text = self.text(value_node, f"{where}: why_not[{index}]")
            if text is not None:
                lines[index] = text
        fields["why_not"] = dict(sorted(lines.items()))

    def _fields_numeric(self, keys, where, fields) -> None:
        if "answer" in keys:
            node = keys["answer"][1]
            value = self.value(node)
            if not is_number(value):
                self.error(node, f"{where}: answer of a numeric question must be a finite number, got {describe(value)}")
            else:
                fields["answer"] = float(value)
        if "tolerance" in keys:
            node = keys["tolerance"][1]
            value = self.value(node)
            if not is_number(value) or value < 0:
                self.error(node, f"{where}: tolerance must be a number >= 0 (relative), got {shown(value)}")
            else:
                fields["tolerance"] = float(value)

    def _fields_text(self, keys, where, fields) -> None:
        if "answer" in keys:
            answers = self.text_list(keys["answer"][1], f"{where}: answer", min_len=1, unique=False)
            if answers is not None:
                fields["answer"] = answers

    def _fields_order(self, keys, where, fields) -> None:
        if "items" in keys:
            items = self.text_list(keys["items"][1], f"{where}: items", min_len=2)
            if items is not None:
                fields["items"] = items

    def _fields_card(self, keys, where, fields) -> None:
        """A card's explanation is the model answer; `key_points` lists what a good answer covers."""
        if "key_points" in keys:
            points = self.text_list(keys["key_points"][1], f"{where}: key_points",
                                    min_len=1, max_len=MAX_KEY_POINTS)
            if points is not None:
                fields["key_points"] = points
