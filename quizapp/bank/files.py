"""Which files make up the bank. No YAML here: the start-up path lists files before it parses any."""

from __future__ import annotations

from pathlib import Path

from quizapp import paths

PACK_SUFFIXES = (".yaml", ".yml")


def pack_files(locations) -> list[Path]:
    """Expand folders into their *.yaml files (sorted); files are kept as named."""
    files: list[Path] = []
    for location in locations:
        location = Path(location)
        if location.is_dir():
            files.extend(sorted(p for p in location.iterdir() if p.suffix in PACK_SUFFIXES and p.is_file()))
        else:
            files.append(location)
    return files


def default_pack_files() -> list[Path]:
    """The shipped bank, then the learner's packs in the data dir (if that folder exists)."""
    locations = [paths.shipped_questions_dir()]
    user_dir = paths.user_questions_dir()
    if user_dir.is_dir():
        locations.append(user_dir)
    return pack_files(locations)
