"""Load question packs: the shipped bank, the learner's own packs, or any files named."""

from __future__ import annotations

from pathlib import Path

from quizapp.bank.files import MAX_PACK_BYTES, UnreadableFile, default_pack_files, pack_files, read_regular_file  # noqa: F401 - re-exported
from quizapp.bank.model import Bank, BankError, Topic
from quizapp.bank.validate import FileValidator
from quizapp.bank.yamlnodes import YamlSyntaxError, compose


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise YamlSyntaxError(line, f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}; save the file as UTF-8") from None


def load_file(path: Path) -> tuple[Topic | None, list[BankError]]:
    """One file's topic, or None with the reasons it cannot be loaded."""
    topic, errors, _ = load_file_with_warnings(path)
    return topic, errors


def load_file_with_warnings(path: Path) -> tuple[Topic | None, list[BankError], list[BankError]]:
    """`load_file`, and the file's warnings: what is worth fixing but does not stop it loading."""
    try:
        data = read_regular_file(path, limit=MAX_PACK_BYTES, what="question file")
    except UnreadableFile as exc:
        return None, [BankError(path, 1, str(exc))], []
    try:
        root, loader = compose(_decode(path, data))
    except YamlSyntaxError as exc:
        return None, [BankError(path, exc.line, exc.reason)], []
    validator = FileValidator(path, loader)
    try:
        topic = validator.topic(root)
    except YamlSyntaxError as exc:  # a bad tag or the like, met while building a value
        return None, [BankError(path, exc.line, exc.reason)], []
    except Exception as exc:  # noqa: BLE001 - PyYAML raises plain errors for exotic tags
        return None, validator.errors + [BankError(path, 1, f"cannot read a value: {exc}")], []
    return topic, sorted(validator.errors, key=lambda e: e.line), sorted(validator.warnings, key=lambda e: e.line)


def load_bank(files=None, *, context=()) -> Bank:
    """Load every file; a bad file is reported and left out, never hiding the good ones.

    `context` files are loaded first only to detect id and topic clashes with them (e.g. checking
    a learner's pack against the shipped bank); their own errors are not reported.
    """
    files = default_pack_files() if files is None else list(files)
    bank = Bank(files=files)
    context_bank = Bank()
    for path in context:
        topic, errors = load_file(path)
        if topic is not None and not errors:
            _add(context_bank, topic, path)
    for path in files:
        topic, errors, warnings = load_file_with_warnings(path)
        bank.warnings.extend(warnings)
        if topic is not None and not errors:
            errors = _clashes(bank, topic) + _clashes(context_bank, topic)
        if errors:
            bank.errors.extend(errors)
            continue
        _add(bank, topic, path)
    return bank


def _clashes(bank: Bank, topic: Topic) -> list[BankError]:
    errors = []
    other = bank.topics.get(topic.slug)
    if other is not None:
        errors.append(BankError(topic.source, 1, f"topic '{topic.slug}' is already defined in {other.source}"))
    for question in topic.questions:
        first = bank.questions.get(question.id)
        if first is not None:
            errors.append(BankError(question.source, question.line,
                                    f"duplicate id '{question.id}': already used at {first.location}"))
    return errors


def _add(bank: Bank, topic: Topic, path: Path) -> None:
    bank.topics[topic.slug] = topic
    for question in topic.questions:
        bank.questions[question.id] = question
