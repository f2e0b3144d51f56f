"""The exercises' own code (checks and the modules beside them) is written on the checking package's
public face alone: what else of quizapp it reached into could change under it without notice."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = "quizapp.checking"


def quizapp_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of quizapp in the file, at any depth (functions included)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] if node.module == "quizapp" else [node.module]
            found += [(node.lineno, name) for name in names]
    return [(line, name) for line, name in found if name == "quizapp" or name.startswith("quizapp.")]


def test_exercises_import_only_the_checking_package():
    files = sorted((ROOT / "exercises").glob("*/*.py"))
    assert len(files) > 50
    outside = [f"{f.relative_to(ROOT)}:{line}: {name}" for f in files for line, name in quizapp_imports(f)
               if not (name == ALLOWED or name.startswith(ALLOWED + "."))]
    assert not outside, "exercises import quizapp outside quizapp.checking:\n" + "\n".join(outside)


def test_the_rule_sees_every_form_of_import(tmp_path):
    sample = tmp_path / "checks.py"
    sample.write_text("import quizapp.study.store\nfrom quizapp import paths\nfrom quizapp.checking import harness\n"
                      "def f():\n    from quizapp.grading.runner import grade\n")
    assert [name for _, name in quizapp_imports(sample)] == ["quizapp.study.store", "quizapp.paths",
                                                              "quizapp.checking", "quizapp.grading.runner"]
