"""`quizapp bench`'s plumbing, on the CPU: the statistics, the FLOP counting, the peaks, the table, the
clocks, and the command end to end with `--device cpu` (a tiny model, labelled CPU figures). What only a
GPU can tell (events, memory, MFU) is exercised by benchmarks/gpu/run.sh on one."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from quizapp.bank import load_bank, pack_files
from quizapp.bench import peaks
from quizapp.bench.flops import achieved_tflops, counted_flops, linear_stack_step_flops, six_n_flops
from quizapp.bench.main import loss_problem, parse_args
from quizapp.bench.model import BATCH_CAP, BATCH_FLOOR, Shape, auto_batch, build, estimate_fp32_peak_bytes
from quizapp.bench.stats import measure_until, ratio, summarize
from quizapp.bench.table import Row, bar, format_bars, format_report_bars, format_table, si, significant
from quizapp.bench.timing import Clock, MarkedLoader

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "exercises" / "amp_training" / "reference.py"
STARTER = ROOT / "exercises" / "amp_training" / "starter.py"


# -- statistics -------------------------------------------------------------------------------

def test_summary_of_known_samples():
    s = summarize([1.0, 2.0, 3.0, 4.0, 10.0])
    assert (s.n, s.mean, s.median, s.minimum, s.maximum) == (5, 4.0, 3.0, 1.0, 10.0)
    assert s.stdev == pytest.approx(math.sqrt(((9 + 4 + 1 + 0 + 36) / 4)))
    assert s.sem == pytest.approx(s.stdev / math.sqrt(5))
    assert s.rel_se == pytest.approx(s.sem / 4.0)


def test_one_sample_has_no_standard_error():
    s = summarize([2.5])
    assert s.median == 2.5 and s.stdev == 0 and math.isinf(s.sem) and math.isinf(s.rel_se)
    assert s.to_json()["sem"] is None  # strict JSON: no Infinity


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [float("inf")]])
def test_summary_refuses_what_is_not_a_timing(bad):
    with pytest.raises(ValueError):
        summarize(bad)


class FakeClock:
    def __init__(self, step: float):
        self.t, self.step = 0.0, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def test_steady_timings_stop_on_the_standard_error_after_the_minimum_runs():
    m = measure_until(lambda: [0.010, 0.010, 0.010], min_runs=3, time_cap=1e9, clock=FakeClock(0.0))
    assert m.converged and m.stopped_by == "standard error" and m.runs == 3 and m.summary.n == 9


def test_noisy_timings_stop_at_the_time_cap_but_never_before_the_minimum_runs():
    values = iter([1.0, 3.0] * 1000)
    m = measure_until(lambda: [next(values)], rel_se=0.01, min_runs=3, time_cap=0.5, clock=FakeClock(1.0))
    # the cap passes during the first run; the minimum of three runs is still made
    assert not m.converged and m.stopped_by == "time cap" and m.runs == 3
    m = measure_until(lambda: [next(values)], rel_se=0.01, min_runs=2, max_runs=4, time_cap=1e9, clock=FakeClock(0))
    assert m.stopped_by == "run cap" and m.runs == 4


def test_standard_error_falls_as_runs_add_up():
    """Alternating 1 and 1.2 ms: the SE of the mean falls as 1/sqrt(n) until it is under 1% of the mean."""
    values = iter([1.0e-3, 1.2e-3] * 1000)
    m = measure_until(lambda: [next(values), next(values)], rel_se=0.01, min_runs=1, time_cap=1e9,
                      clock=FakeClock(0))
    assert m.converged and m.summary.rel_se <= 0.01
    assert summarize(m.samples[:-2]).rel_se > 0.01  # and not one run earlier


def test_ratio():
    assert ratio(6.0, 3.0) == 2.0 and ratio(None, 1.0) is None and ratio(1.0, 0.0) is None


# -- FLOP counting ----------------------------------------------------------------------------

def stack(widths):
    layers = []
    for n_in, n_out in zip(widths, widths[1:]):
        layers += [nn.Linear(n_in, n_out), nn.GELU()]
    return nn.Sequential(*layers)


@pytest.mark.parametrize("autocast", [None, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("input_grad", [False, True])
def test_formula_matches_torch_flop_counter(autocast, input_grad):
    torch.manual_seed(0)
    widths = [24, 40, 16, 8]
    model = stack(widths)
    x = torch.randn(12, widths[0], requires_grad=input_grad)
    y = torch.randn(12, widths[-1])

    def step():
        with torch.autocast("cpu", dtype=autocast or torch.bfloat16, enabled=autocast is not None):
            loss = F.mse_loss(model(x), y)
        loss.backward()

    expected = linear_stack_step_flops(12, list(zip(widths, widths[1:])), input_requires_grad=input_grad)
    assert counted_flops(step) == expected


def test_bench_model_flops():
    shape = Shape(width=4096, depth=8, batch=16384)
    # 6 FLOPs per multiply-add per row (forward, weight grad, input grad), less the first input grad
    assert shape.step_flops == 2 * 16384 * 4096 ** 2 * (3 * 8 - 1)
    assert shape.params == 8 * (4096 * 4096 + 4096)
    assert shape.state_bytes == 16 * shape.params
    small = Shape(width=16, depth=3, batch=5)
    model, optimizer, (x, y), loss_fn = build(small, torch.device("cpu"))

    def step():
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()

    assert counted_flops(step) == small.step_flops


def test_achieved_tflops():
    assert achieved_tflops(2e12, 0.5) == 4.0 and achieved_tflops(1.0, 0.0) is None


def bank_question(topic: str, qid: str):
    return load_bank(pack_files([ROOT / "questions" / f"{topic}.yaml"])).questions[qid]


def test_the_bench_counts_mfu_as_the_question_bank_teaches():
    """The bank's MFU questions (6N FLOPs per token over the dense peak) come out of the bench's own
    functions with the keyed answers."""
    mfu = peaks.mfu(six_n_flops(1.3e9, 12_000) / 1e12, 312.0)
    assert mfu * 100 == pytest.approx(bank_question("compilation-throughput", "comp-mfu-from-throughput").answer,
                                      rel=0.01)
    h100 = peaks.lookup("NVIDIA H100 80GB HBM3").tflops["bf16"]
    tokens = 0.40 * 8 * h100 * 1e12 / six_n_flops(7e9, 1)
    q = bank_question("compilation-throughput", "comp-tokens-from-mfu")
    assert tokens == pytest.approx(q.answer, rel=q.tolerance)


# -- peaks ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, family", [
    ("NVIDIA H100 80GB HBM3", "H100 SXM5"),
    ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA H100 NVL", "H100 NVL"),
    ("NVIDIA H200", "H200 SXM"),
    ("NVIDIA H200 NVL", "H200 NVL"),
    ("NVIDIA GH200 480GB", "GH200 (H100 SXM rates)"),
    ("NVIDIA A100-SXM4-80GB", "A100"),
    ("NVIDIA A100 80GB PCIe", "A100"),
    ("NVIDIA L4", "L4"),
    ("NVIDIA L40S", "L40S"),
    ("NVIDIA A10", "A10"),
    ("Tesla T4", "T4"),
    ("Tesla V100-SXM2-16GB", "V100 SXM2"),
    ("Tesla V100-PCIE-32GB", "V100 PCIe"),
])
def test_peaks_by_device_name(name, family):
    found = peaks.lookup(name)
    assert found is not None and found.family == family
    assert found.source and "datasheet" in found.source
    assert set(found.tflops) <= set(peaks.PRECISIONS) and "fp32" in found.tflops and "fp16" in found.tflops


@pytest.mark.parametrize("name", ["NVIDIA A10G", "NVIDIA L40", "NVIDIA GeForce RTX 4090", "CPU", ""])
def test_unknown_gpus_get_no_peak(name):
    assert peaks.lookup(name) is None


def test_peak_values_agree_with_the_bank_and_each_other():
    h100 = peaks.lookup("NVIDIA H100 80GB HBM3").tflops
    assert h100["bf16"] == pytest.approx(989, rel=0.001)  # the bank's comp-tokens-from-mfu
    assert peaks.lookup("NVIDIA A100-SXM4-40GB").tflops["bf16"] == 312  # comp-mfu-from-throughput
    assert h100["tf32"] == pytest.approx(495, rel=0.001) and h100["fp32"] == pytest.approx(67, rel=0.01)
    for _, p in peaks.TABLE:  # tensor cores beat the CUDA cores; dense TF32 is half of dense 16-bit
        assert p.tflops["fp16"] > p.tflops["fp32"]
        if "tf32" in p.tflops:
            assert p.tflops["tf32"] == pytest.approx(p.tflops["bf16"] / 2, rel=0.02)
    given = peaks.given(500.0)
    assert given.tflops == {"bf16": 500.0, "fp16": 500.0} and "--peak-tflops" in given.source
    assert peaks.mfu(400.0, 800.0) == 0.5 and peaks.mfu(None, 800.0) is None and peaks.mfu(1.0, None) is None


# -- the table ----------------------------------------------------------------------------------

def rows():
    return [
        Row("float32 (TF32 off)", "fp32", step_s=0.2601, rel_se=0.002, steps=18, converged=True, samples_per_s=63_000,
            peak_bytes=6_500 * 2**20, above_state_bytes=4_450 * 2**20, speedup=1.0, mem_saved=0.0, tflops=48.9,
            mfu=0.73, syncs_per_step=1.0, baseline=True),
        Row("bfloat16: your loop", "bf16", step_s=0.02512, rel_se=0.013, steps=400, converged=False,
            samples_per_s=652_000, peak_bytes=4_400 * 2**20, above_state_bytes=2_350 * 2**20, speedup=10.35,
            mem_saved=0.323, tflops=506.0, mfu=0.511, syncs_per_step=1.0),
        Row("float16: your loop", "fp16", error="RuntimeError: boom"),
    ]


def test_table_columns_line_up():
    text = format_table(rows())
    lines = text.splitlines()
    assert len(lines) == 5 and set(lines[1]) <= {"-", " "}
    header = lines[0]
    for name in ("config", "ms/step", "±SE", "samples/s", "peak MiB", "speedup", "mem saved", "TFLOP/s", "MFU",
                 "syncs/step"):
        assert name in header
    # right-aligned numbers end where their header ends
    end = header.index("ms/step") + len("ms/step")
    assert lines[2][:end].endswith("260") and lines[3][:end].endswith("25.1") and lines[4][:end].endswith("failed")
    assert "10.35x" in lines[3] and "32%" in lines[3] and "51%" in lines[3] and "506" in lines[3]
    assert "1.3%*" in lines[3] and "0.2%" in lines[2] and "0.2%*" not in lines[2]
    assert "6,500" in lines[2] and "4,450" in lines[2]


def test_cpu_table_says_so():
    assert "CPU ms/step" in format_table(rows(), cpu=True).splitlines()[0]
    assert "CPU step time" in format_report_bars(rows(), cpu=True)


def test_bars():
    assert bar(10, 10, width=8) == "█" * 8
    assert bar(5, 10, width=8) == "█" * 4
    assert bar(1, 16, width=4) == "▎"  # 2 eighths of a character
    assert bar(1e-9, 10, width=4) == "▏"  # never invisible
    assert bar(0, 10) == "" and bar(1, 0) == ""
    text = format_bars("t", [("a", 2.0), ("bb", 1.0), ("c", None)], " ms")
    lines = text.splitlines()
    assert lines[1].count("█") == 40 and lines[2].count("█") == 20 and lines[3].endswith("(none)")
    report = format_report_bars(rows())
    assert "speedup against the float32 baseline" in report and "peak memory" in report


def test_number_formats():
    assert significant(260.1) == "260" and significant(8.4213) == "8.42" and significant(0.01534) == "0.0153"
    assert significant(12345.6) == "12,346"
    assert si(6.6e12, "FLOP") == "6.60 TFLOP" and si(1_311_000, "FLOP", 4) == "1.311 MFLOP" and si(8320) == "8.32 k"


# -- clocks, loaders, the model --------------------------------------------------------------------

def test_marked_loader_marks_around_every_step():
    clock = Clock()
    loader = MarkedLoader(("x", "y"), 4, clock)
    seen = list(loader)
    assert seen == [("x", "y")] * 4 and len(loader) == 4
    assert len(clock.marks) == 5 and len(clock.intervals()) == 4
    assert all(b >= a for a, b in zip(clock.marks, clock.marks[1:]))
    list(MarkedLoader(("x", "y"), 2))  # no clock: no marks, no error


def test_batch_is_sized_to_memory():
    gib = 2**30
    assert auto_batch(4096, 8, 80 * gib) == BATCH_CAP  # an H100 takes the cap
    small = auto_batch(4096, 8, 16 * gib)
    assert BATCH_FLOOR <= small < BATCH_CAP
    assert estimate_fp32_peak_bytes(4096, 8, small) <= 0.3 * 16 * gib < estimate_fp32_peak_bytes(4096, 8, small * 2)
    assert auto_batch(4096, 8, 1 * gib) == BATCH_FLOOR


def test_loss_problems():
    assert loss_problem([1.0], [1.01]) is None
    assert "non-finite" in loss_problem([float("nan")], [1.0])
    assert "%" in loss_problem([2.0], [1.0])
    assert "not one loss per epoch" in loss_problem(None, [1.0])


def test_arguments():
    args = parse_args(["f.py"])
    assert args.device == "cuda" and args.dtypes == ["float16", "bfloat16"] and args.rel_se == 0.01
    assert parse_args(["f.py", "--dtype", "bfloat16", "--dtype", "bfloat16"]).dtypes == ["bfloat16"]
    for bad in (["f.py", "--batch", "0"], ["f.py", "--time-cap", "-1"], ["f.py", "--device", "tpu"]):
        with pytest.raises(SystemExit) as exc:
            parse_args(bad)
        assert exc.value.code == 2


# -- the command, end to end -------------------------------------------------------------------------

def quizapp(*args, timeout=300):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "quizapp", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


@pytest.fixture(scope="module")
def cpu_bench(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    done = quizapp("bench", REFERENCE, "--device", "cpu", "--time-cap", "0.2", "--json", out)
    return done, out


def test_cpu_bench_prints_a_labelled_table(cpu_bench):
    done, out = cpu_bench
    assert done.returncode == 0, done.stderr[-3000:]
    text = done.stdout
    assert text.startswith("=") and "CPU FIGURES (--device cpu)" in text and text.rstrip().endswith(
        "CPU FIGURES: see the note at the top.")
    table = text[text.index("\nconfig ") + 1:].splitlines()
    assert "CPU ms/step" in table[0]
    assert [line.split("  ")[0] for line in table[2:5]] == ["float32", "float16: your loop", "bfloat16: your loop"]
    assert "FlopCounterMode counts the same" in text
    assert "MFU: none on the CPU" in text and "speedup against the float32 baseline" in text
    assert "Traceback" not in done.stderr


def test_cpu_bench_json(cpu_bench):
    _, out = cpu_bench
    report = json.loads(out.read_text())
    assert report["cpu_figures"] is True and report["device_type"] == "cpu" and report["peaks"] is None
    labels = [r["label"] for r in report["rows"]]
    assert labels == ["float32", "float16: your loop", "bfloat16: your loop"]
    for row in report["rows"]:
        assert row["error"] is None and row["steps"] >= 3 and row["step_s"] > 0 and row["peak_bytes"] is None
        assert row["measurement"]["runs"] >= 3 and row["counted_step_flops"] == report["model"]["step_flops"]
        assert row["tflops"] == pytest.approx(report["model"]["step_flops"] / row["step_s"] / 1e12)
        assert row["first_losses"] and all(math.isfinite(v) for v in row["first_losses"])
    assert report["rows"][0]["speedup"] == 1.0


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA: the bench runs instead of refusing")
def test_without_cuda_the_bench_exits_2_and_says_why():
    done = quizapp("bench", REFERENCE)
    assert done.returncode == 2 and done.stdout == ""
    assert "CUDA is not available here" in done.stderr and "--device cpu" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_loop_that_raises_fails_its_rows_and_exits_1():
    done = quizapp("bench", STARTER, "--device", "cpu", "--dtype", "bfloat16", "--time-cap", "0.05", "--no-sandbox")
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    assert "bfloat16: your loop: FAILED: NotImplementedError" in done.stdout
    assert "failed" in done.stdout.split("bfloat16: your loop", 1)[1].splitlines()[0]


@pytest.mark.parametrize("args, says", [
    (["missing.py"], "no such file: missing.py"),
    (["exercises/lora/reference.py"], "the bench times training loops of the 'amp_training' exercise"),
    (["exercises/amp_training/reference.py", "--exercise", "nope"], "unknown exercise 'nope'"),
    (["exercises"], "is a folder"),
])
def test_misuse_exits_2_before_loading_torch(args, says):
    done = quizapp("bench", *args, timeout=60)
    assert done.returncode == 2 and says in done.stderr, done.stderr


def test_the_command_side_never_imports_torch():
    code = "import sys, quizapp.cli, quizapp.commands.bench; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"
