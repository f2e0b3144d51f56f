"""The question bank: model, loading with validation, answer checking. Never imports torch or textual.

Names are imported on first use (PEP 562): the TUI's start-up path reads the bank from its cache
and should not pay for the YAML parser and validator it does not run.
"""

from importlib import import_module

from quizapp.bank.model import QUESTION_TYPES, Bank, BankError, Question, Topic

_LAZY = {
    "Verdict": "quizapp.bank.answers", "check_answer": "quizapp.bank.answers",
    "normalise_text": "quizapp.bank.answers", "parse_number": "quizapp.bank.answers",
    "load_bank": "quizapp.bank.load", "load_file": "quizapp.bank.load",
    "default_pack_files": "quizapp.bank.files", "pack_files": "quizapp.bank.files",
    "load_bank_cached": "quizapp.bank.cache",
}

__all__ = ["QUESTION_TYPES", "Bank", "BankError", "Question", "Topic", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'quizapp.bank' has no attribute {name!r}")
