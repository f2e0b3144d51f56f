"""`quizapp bench` on a GPU, on a model small enough for a test: every configuration is measured with
CUDA events, peak memory and MFU are reported, and the syncs it counts are the ones torch makes (a loop
reading loss.item() waits once a step; the no-sync bfloat16 loop does not; a float16 loop still waits
in GradScaler.step)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA bench: this machine has no CUDA GPU "
                                "(benchmarks/gpu/run.sh runs it on one)")

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "exercises" / "amp_training" / "reference.py"


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    out = tmp_path_factory.mktemp("cuda-bench") / "bench.json"
    done = subprocess.run([sys.executable, "-m", "quizapp", "bench", str(REFERENCE), "--width", "2048", "--depth", "4",
                           "--batch", "8192", "--time-cap", "2", "--json", str(out)], capture_output=True, text=True,
                          timeout=600, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    return done.stdout, json.loads(out.read_text())


def rows(report: dict) -> dict:
    return {r["label"]: r for r in report["rows"]}


def test_every_configuration_is_measured(bench):
    text, report = bench
    assert "CPU FIGURES" not in text and report["cpu_figures"] is False
    labels = list(rows(report))
    assert labels[:2] == ["float32 (TF32 off)", "float32 (TF32 on)"]
    assert "float16: your loop" in labels and "float16: no per-step sync" in labels
    for row in report["rows"]:
        assert row["error"] is None and row["step_s"] > 0 and row["steps"] >= 9, row
        assert row["peak_bytes"] > row["above_state_bytes"] > 0 and row["tflops"] > 0
        assert row["counted_step_flops"] == report["model"]["step_flops"]
    assert report["timing"]["clock"].startswith("CUDA events")
    assert report["startup"]["context_s"] > 0


def test_mixed_precision_saves_memory_and_time_against_float32(bench):
    _, report = bench
    r = rows(report)
    for label in ("float16: your loop", "bfloat16: your loop"):
        if label in r:
            assert r[label]["mem_saved"] > 0.1, r[label]
            assert r[label]["speedup"] > 1.0, r[label]


def test_mfu_has_a_known_peak_on_known_gpus(bench):
    _, report = bench
    if report["peaks"] is None:
        pytest.skip(f"no datasheet peak for {report['gpu']['name']}")
    assert "datasheet" in report["peaks"]["source"]
    for row in report["rows"]:
        assert 0 < row["mfu"] < 1.0, row


def test_syncs_per_step_are_counted(bench):
    _, report = bench
    r = rows(report)
    assert r["float32 (TF32 off)"]["syncs_per_step"] >= 1  # loss.item() every step
    assert r["float16: your loop"]["syncs_per_step"] >= 2  # loss.item() and GradScaler.step's inf check
    assert r["float16: no per-step sync"]["syncs_per_step"] >= 1  # GradScaler.step still waits
    if "bfloat16: no per-step sync" in r:
        assert r["bfloat16: no per-step sync"]["syncs_per_step"] < 1  # one .item() an epoch of 4 steps
