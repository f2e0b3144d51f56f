"""The GPU programme (benchmarks/gpu/run.sh) on a machine without a GPU: its dry run goes end to end,
its pieces (the summary, the matrix table) work on made-up results, its --max-files option keeps the
output folder small without losing anything, and the CUDA tests it runs are built to be skipped
cleanly here."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quizapp.bank import load_bank, pack_files

ROOT = Path(__file__).resolve().parents[1]
GPU = ROOT / "benchmarks" / "gpu"
RUN = GPU / "run.sh"
CUDA_TESTS = sorted((ROOT / "tests" / "cuda").glob("test_*.py"))


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_sh(*args, timeout=300, env=None):
    # The interpreter running these tests is the one with quizapp's dependencies; left to itself, run.sh
    # would look for .venv/bin/python, then python3 on the PATH, which in another clone may lack torch.
    return subprocess.run(["bash", str(RUN), "--python", sys.executable, *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu-dry")
    done = run_sh("--dry-run", out)
    return done, out


def test_dry_run_goes_end_to_end(dry_run):
    done, out = dry_run
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    steps = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]
    assert [(s["step"], s["status"]) for s in steps] == [
        ("env", "ok"), ("bench", "dry"), ("grade", "dry"), ("tests", "dry"), ("summary", "ok")]
    text = done.stdout
    for step in ("bench", "grade", "tests"):
        assert f"== {step} (dry run): would run" in text and f"== {step}: checked" in text
    assert "quizapp bench exercises/amp_training/reference.py --dtype float16 --dtype bfloat16" in text
    assert "grade_all.py --out" in text and "pytest -p cuda_only tests/cuda tests/facts" in text


def test_dry_run_checks_what_each_step_needs(dry_run):
    done, out = dry_run
    text = done.stdout
    assert "CUDA only: step time, memory and TFLOP/s" in text  # the bench verb answers
    assert "matrix: " in text and "amp_training: reference, starter, " in text  # the matrix is found
    collected = next(line for line in text.splitlines() if "tests collected" in line)
    assert int(collected.split("|")[-1].split("/")[0]) > 50, collected  # tests/cuda and the gated facts
    assert "test_cuda_autocast_float32_ops" in text  # one of tests/facts' CUDA-gated tests
    env = json.loads((out / "env.json").read_text())
    assert env["dry_run"] is True and env["missing"] == [] and "torch" in env


def test_dry_run_writes_a_summary_and_few_files(dry_run):
    done, out = dry_run
    summary = (out / "SUMMARY.md").read_text()
    assert "**DRY RUN**" in summary and "| bench | dry |" in summary
    assert summary.strip() in done.stdout  # printed last: the end of the console output is the summary
    files = sorted(p.name for p in out.iterdir())
    assert len(files) <= 8 and all(p.is_file() for p in out.iterdir()), files  # --max-files' default
    assert files == ["SUMMARY.md", "env.json", "run.log", "steps.jsonl"]
    assert f"python: {sys.executable} (" in done.stdout  # the interpreter it was told, not one it found


def test_max_files_folds_the_rest_into_the_log(tmp_path):
    (tmp_path / "mine.txt").write_text("not the run's\n")  # counted, never touched
    done = run_sh("--dry-run", "--only", "summary", "--max-files", "3", tmp_path)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["SUMMARY.md", "mine.txt", "run.log"]
    assert (tmp_path / "mine.txt").read_text() == "not the run's\n"
    log = (tmp_path / "run.log").read_text()
    for folded in ("steps.jsonl", "env.json"):
        assert f"== {folded} folded into run.log (--max-files 3)" in done.stdout
        assert f"---- {folded} (folded in by --max-files 3) ----" in log
    assert '"dry_run": true' in log and '"step": "summary"' in log  # their contents, not just their names


def test_usage():
    assert run_sh("--help").returncode == 0 and "--dry-run" in run_sh("--help").stdout
    for bad in (["--frobnicate"], ["--only", "nope"], ["--budget", "soon"], ["--max-files", "1"],
                ["--max-files", "many"], ["--python", "/no/such/python"]):
        done = run_sh(*bad)
        assert done.returncode == 2 and "run.sh:" in done.stderr, (bad, done.stderr)


def test_without_cuda_a_real_run_refuses(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: a real run would run")
    done = run_sh("--only", "bench", tmp_path)
    assert done.returncode == 2, done.stdout[-3000:]
    assert "CUDA is not available" in done.stdout and "--dry-run" in done.stdout
    assert not (tmp_path / "bench.json").exists()


# -- the pieces, on made-up results ----------------------------------------------------------------

def report(device: str, statuses: dict, messages: dict | None = None) -> dict:
    messages = messages or {}
    return {"status": "fail" if any(s in ("fail", "error") for s in statuses.values()) else "pass", "device": device,
            "checks": [{"id": k, "title": k, "status": s, "message": messages.get(k, "")} for k, s in statuses.items()]}


def grade(kind, file, device, statuses, messages=None, exercise="amp_training", wall=1.0):
    r = report(device, statuses, messages)
    return {"exercise": exercise, "kind": kind, "file": file, "device": device, "drill": False, "path": "warm",
            "code": 1 if r["status"] == "fail" else 0, "wall_s": wall, "status": r["status"], "report": r}


GATE = "your loop turns autocast/the scaler off when the device is not CUDA; this grade ran on CPU, where ..."


def made_up_grades() -> dict:
    return {"schema": 1, "elapsed_s": 12.0, "workers": 4, "complete": True, "grades": [
        grade("reference", "exercises/amp_training/reference.py", "cuda", {"a": "pass", "b": "pass"}, wall=6.5),
        grade("reference", "exercises/amp_training/reference.py", "cpu", {"a": "pass", "b": "pass"}, wall=4.0),
        # the same verdicts on both devices
        grade("buggy", "b/same.py", "cpu", {"a": "fail", "b": "pass"}),
        grade("buggy", "b/same.py", "cuda", {"a": "fail", "b": "pass"}),
        # a CUDA-gated loop: fails on the CPU for the CPU's sake (a) and as a consequence (b), passes on CUDA
        grade("buggy", "b/gated.py", "cpu", {"a": "fail", "b": "fail"}, {"a": GATE}),
        grade("buggy", "b/gated.py", "cuda", {"a": "pass", "b": "pass"}),
        # ... but the check that says "this grade ran on CPU" must pass on CUDA
        grade("buggy", "b/gated_still.py", "cpu", {"a": "fail", "b": "pass"}, {"a": GATE}),
        grade("buggy", "b/gated_still.py", "cuda", {"a": "fail", "b": "pass"}),
        # a tolerance that CUDA breaks
        grade("buggy", "b/differs.py", "cpu", {"a": "fail", "b": "pass"}),
        grade("buggy", "b/differs.py", "cuda", {"a": "fail", "b": "fail"}, {"b": "off by 3e-4 (tolerance 1e-4)"}),
    ]}


def test_matrix_table_and_verdicts():
    grade_all = load("gpu_grade_all", GPU / "grade_all.py")
    results = made_up_grades()["grades"]
    assert not grade_all.verdicts_differ(results, "b/same.py")
    assert not grade_all.verdicts_differ(results, "b/gated.py")
    assert grade_all.verdicts_differ(results, "b/gated_still.py")
    assert grade_all.verdicts_differ(results, "b/differs.py")
    table = grade_all.table(results).splitlines()
    assert table[0].split()[:3] == ["exercise", "ref", "cuda"]
    row = table[1].split()
    assert row[0] == "amp_training" and row[1:3] == ["6.5", "4.0"] and row[-2:] == ["2", "-"]


def test_summary_names_what_differs_and_sets_claims_against_figures(tmp_path):
    summarize = load("gpu_summarize", GPU / "summarize.py")
    (tmp_path / "grades.json").write_text(json.dumps(made_up_grades()))
    (tmp_path / "steps.jsonl").write_text(json.dumps({"step": "grade", "status": "ok", "rc": 0, "seconds": 12,
                                                      "limit": 300, "command": "x", "note": ""}) + "\n")
    (tmp_path / "env.json").write_text(json.dumps({"gpu": "NVIDIA H100 80GB HBM3", "torch": "2.11.0+cu130"}))
    rows = [{"label": "float32 (TF32 off)", "step_s": 0.26, "speedup": 1.0, "mem_saved": 0.0, "mfu": 0.7},
            {"label": "float32 (TF32 on)", "step_s": 0.052, "speedup": 5.2, "mem_saved": 0.0, "mfu": 0.5},
            {"label": "bfloat16: your loop", "step_s": 0.026, "speedup": 10.0, "mem_saved": 0.31, "mfu": 0.52}]
    (tmp_path / "bench.json").write_text(json.dumps({"cpu_figures": False, "rows": rows}))
    (tmp_path / "bench.txt").write_text("the bench's table\n")
    (tmp_path / "tests.log").write_text("FAILED tests/cuda/test_x.py::test_y - AssertionError\n"
                                        "==== 1 failed, 280 passed, 7 skipped in 80.1s ====\n")
    text = summarize.summarize(tmp_path)
    assert "DRY RUN" not in text and "- GPU: NVIDIA H100 80GB HBM3" in text
    assert "| grade | ok | 12 | 300 | 0 |" in text
    assert "- pytest: 1 failed, 280 passed, 7 skipped in 80.1s" in text and "FAILED tests/cuda/test_x.py" in text
    assert "`b/differs.py`: fails on CUDA only: b (off by 3e-4 (tolerance 1e-4))" in text
    assert "`b/gated_still.py`: fails on CUDA only: a" in text
    assert "b/gated.py" not in text and "b/same.py" not in text
    assert "the bench's table" in text
    assert "- bfloat16: 10.00x float32's step (TF32 off); 2.00x against float32 with TF32 on; peak memory 31% below" \
        in text


def test_summary_of_nothing(tmp_path):
    summarize = load("gpu_summarize", GPU / "summarize.py")
    assert summarize.main([str(tmp_path)]) == 0
    text = (tmp_path / "SUMMARY.md").read_text()
    assert "the grading step did not run" in text and "the bench step did not run" in text


# -- the CUDA tests are built to skip cleanly -------------------------------------------------------------

def module_marks(path: Path) -> list[ast.AST]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.value for node in tree.body if isinstance(node, ast.Assign)
            and any(getattr(t, "id", None) == "pytestmark" for t in node.targets)]


@pytest.mark.parametrize("path", CUDA_TESTS, ids=[p.name for p in CUDA_TESTS])
def test_every_cuda_module_skips_itself_without_cuda(path):
    marks = module_marks(path)
    source = ast.unparse(marks[0]) if marks else ""
    assert "skipif" in source and "torch.cuda.is_available()" in source and "reason=" in source, path
    assert "CUDA" in source or "GPU" in source  # the reason names it: run.sh's cuda_only plugin selects by it


def test_cuda_tests_name_only_questions_that_exist():
    bank = load_bank(pack_files(sorted((ROOT / "questions").glob("*.yaml")))).questions
    named = set()
    for path in CUDA_TESTS:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "verifies":
                named |= {a.value for a in node.args}
    assert named and sorted(named - set(bank)) == []


def test_cuda_tests_collect_and_skip_here():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the tests run instead")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "tests/cuda"], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:]
    last = done.stdout.strip().splitlines()[-1]
    assert "skipped" in last and "passed" not in last and "failed" not in last and "error" not in last, last
    assert "this machine has no CUDA GPU" in done.stdout
