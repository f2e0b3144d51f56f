"""Every check of every exercise names the bank questions it rests on (`questions:` in exercise.yaml).

When a check fails, the learner is sent to review exactly those questions, so each link must name a
question the shipped bank has, and the links must cover the exercise's checks, no more and no fewer.

The check ids come from each exercise's checks.py, imported (not run) in one child process: the
`CHECKS = Checks(...)` object lists them in report order. A `Required` signature is not a check of
its own: a solution that does not fit it makes the grade an error before any check runs, so it has
no id in the report and none here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import yaml

from quizapp.bank import load_bank, pack_files
from quizapp.paths import shipped_exercises_dir, shipped_questions_dir

EXERCISES_DIR = shipped_exercises_dir()
FOLDERS = sorted(p.parent for p in EXERCISES_DIR.glob("*/exercise.yaml"))
MIN_LINKS, MAX_LINKS = 1, 4

# Imports each checks.py under a name of its own (so that no two share a module) and prints
# {exercise: [check ids]}. torch and the checks' siblings load in the child, never in the test run.
_CHECK_IDS_SCRIPT = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from quizapp.checking.loading import load_module

    out = {}
    for folder in map(Path, sys.argv[1:]):
        module = load_module(f"quizapp_linkcheck_{folder.name}", folder / "checks.py")
        out[folder.name] = [check.id for check in module.CHECKS.checks]
    sys.stdout.write(json.dumps(out))
""")


@pytest.fixture(scope="module")
def bank_ids() -> set[str]:
    bank = load_bank(pack_files([shipped_questions_dir()]))
    assert not bank.errors, f"the shipped bank does not load cleanly: {bank.errors[:3]}"
    return set(bank.questions)


@pytest.fixture(scope="module")
def declared_checks() -> dict[str, list[str]]:
    proc = subprocess.run([sys.executable, "-c", _CHECK_IDS_SCRIPT, *map(str, FOLDERS)],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, f"importing the exercises' checks.py failed:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout)


def links_of(folder) -> dict:
    data = yaml.safe_load((folder / "exercise.yaml").read_text(encoding="utf-8"))
    links = data.get("questions")
    assert isinstance(links, dict) and links, (
        f"{folder.name}: exercise.yaml has no `questions:` mapping (check id -> the bank's question ids)")
    return links


def test_there_are_exercises():
    # the ten first exercises at least (a glob that found none would make every other test vacuous)
    assert len(FOLDERS) >= 10, f"expected the shipped exercises, found {[f.name for f in FOLDERS]}"


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_links_cover_exactly_the_declared_checks(folder, declared_checks):
    declared = declared_checks[folder.name]
    assert declared, f"{folder.name}: checks.py declares no checks"
    assert len(set(declared)) == len(declared), f"{folder.name}: checks.py declares a check id twice: {declared}"
    linked = list(links_of(folder))
    missing = [c for c in declared if c not in linked]
    unknown = [c for c in linked if c not in declared]
    assert not missing, f"{folder.name}: checks with no linked questions: {missing}"
    assert not unknown, f"{folder.name}: `questions:` names checks that checks.py does not declare: {unknown}"


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_each_check_links_1_to_4_distinct_bank_questions(folder, bank_ids):
    for check, ids in links_of(folder).items():
        where = f"{folder.name}, check {check!r}"
        assert isinstance(ids, list), f"{where}: expected a list of question ids, got {ids!r}"
        assert all(isinstance(q, str) for q in ids), f"{where}: question ids must be strings, got {ids!r}"
        assert MIN_LINKS <= len(ids) <= MAX_LINKS, (
            f"{where}: links {len(ids)} questions, expected {MIN_LINKS} to {MAX_LINKS}")
        repeated = sorted({q for q in ids if ids.count(q) > 1})
        assert not repeated, f"{where}: names {repeated} more than once"
        unknown = [q for q in ids if q not in bank_ids]
        assert not unknown, f"{where}: no such question in the bank: {unknown}"


def test_link_figures(declared_checks):
    # From the run that added the links: 91 checks over 10 exercises make 215 links to 100 distinct
    # bank questions (per exercise, checks/distinct questions: activation_checkpointing 6/10,
    # amp_training 14/21, ddp_accumulation 10/14, distillation 11/12, fake_quant 9/11,
    # grad_accumulation 8/11, label_smoothing 9/13, lora 11/11, loss_scaler 7/9, warmup_cosine 6/12).
    # The drills' two shared checks (honest-fix, matches-fixed-run) rest on the same few debugging
    # cards in every drill; the spread is asked of the exercises, and of each drill on its own.
    checks, links, distinct = 0, 0, set()
    for folder in FOLDERS:
        if folder.name.startswith("debug_"):
            own = {q for ids in links_of(folder).values() for q in ids}
            assert len(own) >= 3, f"{folder.name}: its checks link only {sorted(own)}"
            continue
        for ids in links_of(folder).values():
            checks += 1
            links += len(ids)
            distinct.update(ids)
    assert checks == sum(len(ids) for name, ids in declared_checks.items() if not name.startswith("debug_"))
    assert links >= checks, f"{links} links for {checks} checks: every check needs at least one"
    assert len(distinct) >= checks, (
        f"{checks} checks link only {len(distinct)} distinct questions: links bunch on a few cards")
