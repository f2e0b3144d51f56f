"""The question bank: model, loading with validation, answer checking. Never imports torch or textual."""

from quizapp.bank.answers import Verdict, check_answer, normalise_text, parse_number
from quizapp.bank.load import default_pack_files, load_bank, load_file, pack_files
from quizapp.bank.model import QUESTION_TYPES, Bank, BankError, Question, Topic

__all__ = [
    "QUESTION_TYPES", "Bank", "BankError", "Question", "Topic", "Verdict",
    "check_answer", "default_pack_files", "load_bank", "load_file", "normalise_text",
    "pack_files", "parse_number",
]
