"""The loaded bank from the start-up cache: the app's first screen needs no YAML parsing.

Two entries, built from the same files: the whole bank, and its outline (what home draws: topic
titles, question ids, how many problems), which is a few kilobytes and loads without the question
model. `quizapp bank check` uses neither: it always validates the files as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from quizapp.bank.files import default_pack_files
from quizapp.bank.outline import BankOutline
from quizapp.filecache import cached

if TYPE_CHECKING:
    from quizapp.bank.model import Bank


def _load(files):
    from quizapp.bank.load import load_bank  # the YAML parser, only when a file changed

    return load_bank(files)


# The code that shapes a loaded bank: a checkout updated without a version bump must not unpickle
# questions of an older shape, nor keep errors an updated validator would no longer report.
_CODE = [Path(__file__).with_name(name)
         for name in ("model.py", "validate.py", "codewidth.py", "load.py", "yamlnodes.py", "outline.py")]


def load_bank_cached(files=None) -> Bank:
    """`load_bank(files)`, from the cache when no pack file changed since it was written."""
    from quizapp.bank.model import Bank

    files = default_pack_files() if files is None else list(files)
    return cached("bank", files + _CODE, lambda: _load(files), Bank)


def load_outline_cached(files=None) -> tuple[BankOutline, Bank | None]:
    """The bank's outline, from the cache when no pack file changed since it was written.

    The bank itself comes back too when it had to be loaded to build the outline (a pack changed),
    so that the caller need not load it again; otherwise None, and `load_bank_cached` gives it.
    """
    files = default_pack_files() if files is None else list(files)
    loaded = []

    def build() -> BankOutline:
        loaded.append(load_bank_cached(files))
        return loaded[0].outline()

    return cached("outline", files + _CODE, build, BankOutline), (loaded[0] if loaded else None)
