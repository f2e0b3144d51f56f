"""The loaded bank from the start-up cache: the app's first screen needs no YAML parsing.

`quizapp bank check` never uses it: it always validates the files as they are.
"""

from __future__ import annotations

from pathlib import Path

from quizapp.bank.files import default_pack_files
from quizapp.bank.model import Bank
from quizapp.filecache import cached


def _load(files):
    from quizapp.bank.load import load_bank  # the YAML parser, only when a file changed

    return load_bank(files)


# The code that shapes a loaded bank: a checkout updated without a version bump must not unpickle
# questions of an older shape, nor keep errors an updated validator would no longer report.
_CODE = [Path(__file__).with_name(name) for name in ("model.py", "validate.py", "load.py", "yamlnodes.py")]


def load_bank_cached(files=None) -> Bank:
    """`load_bank(files)`, from the cache when no pack file changed since it was written."""
    files = default_pack_files() if files is None else list(files)
    return cached("bank", files + _CODE, lambda: _load(files), Bank)
