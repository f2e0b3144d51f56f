"""The question bank: model, loading with validation, answer checking. Never imports torch or textual.

Names are imported on first use (PEP 562): the TUI's start-up path reads only the bank's outline
from its cache, and should not pay for the question model, the YAML parser or the validator.
"""

from importlib import import_module

_LAZY = {
    "QUESTION_TYPES": "quizapp.bank.model", "Bank": "quizapp.bank.model", "BankError": "quizapp.bank.model",
    "Question": "quizapp.bank.model", "Topic": "quizapp.bank.model",
    "Verdict": "quizapp.bank.answers", "check_answer": "quizapp.bank.answers",
    "normalise_text": "quizapp.bank.answers", "parse_number": "quizapp.bank.answers",
    "load_bank": "quizapp.bank.load", "load_file": "quizapp.bank.load",
    "default_pack_files": "quizapp.bank.files", "pack_files": "quizapp.bank.files",
    "load_bank_cached": "quizapp.bank.cache",
}

__all__ = list(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'quizapp.bank' has no attribute {name!r}")
