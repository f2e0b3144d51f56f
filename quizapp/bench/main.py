"""`python -m quizapp.bench FILE`: the learner's `train_with_amp` against a float32 baseline, on CUDA.

For each configuration (float32 with TF32 off: the baseline; float32 with TF32 on; the learner's loop
in float16 and in bfloat16; the reference loop without a sync every step) on the same model, data and
seed: two warm-up calls, then timed runs until the standard error of the step time is under 1% of its
mean or the time cap is reached (see timing.py and stats.py); the peak of torch.cuda.max_memory_allocated;
achieved TFLOP/s and MFU against the GPU's dense peak; the host-device syncs per step. Progress goes to
stderr, the report to stdout, everything measured to --json.

Exit codes: 0 measured; 1 the learner's loop could not be loaded or failed; 2 misuse (no CUDA without
`--device cpu`, no such file, a bad option).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DTYPE_NAMES = ("float16", "bfloat16")
PRECISION_OF = {"float16": "fp16", "bfloat16": "bf16"}
WARMUP_STEPS = 3
MIN_RUNS = 3
LOSS_RTOL = 0.05  # a loop's first losses against float32's: the grader's close-to-fp32 tolerance
NO_CUDA = ("quizapp bench: CUDA is not available here{why}. The bench measures a GPU's step time, memory and "
           "TFLOP/s; run it on a machine with an NVIDIA GPU and a CUDA build of torch, or add `--device cpu` "
           "for a dry run on a tiny model whose figures are labelled CPU figures.")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="quizapp bench", description="Time a train_with_amp loop against float32.")
    p.add_argument("file", help="the solution file (amp_training)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="cuda (default); cpu: a dry run on a tiny model, its figures labelled CPU figures")
    p.add_argument("--dtype", dest="dtypes", action="append", choices=DTYPE_NAMES,
                   help="a precision to bench (repeat; default: float16 and bfloat16)")
    p.add_argument("--batch", type=int, help="rows per step (default: sized to the GPU's memory)")
    p.add_argument("--width", type=int, help="features of every layer (default 4096 on CUDA, 64 on the CPU)")
    p.add_argument("--depth", type=int, help="Linear+GELU blocks (default 8 on CUDA, 2 on the CPU)")
    p.add_argument("--time-cap", type=float, help="seconds of timed runs per configuration (default 15; 2 on the CPU)")
    p.add_argument("--rel-se", type=float, default=0.01, help="stop once the standard error is under this share")
    p.add_argument("--peak-tflops", type=float, help="the GPU's dense 16-bit peak, where the built-in table lacks it")
    p.add_argument("--json", dest="json_path", help="write every figure to this JSON file")
    p.add_argument("--no-tf32-row", action="store_true", help="skip the float32 configuration with TF32 on")
    p.add_argument("--no-sync-rows", action="store_true", help="skip the reference loops without a per-step sync")
    p.add_argument("--no-ceiling", action="store_true", help="skip measuring the matmul ceilings")
    p.add_argument("--no-sandbox", action="store_true", help="run the loop without the grader's sandbox")
    p.add_argument("--work-dir", help="the sandboxed loop's own folder (default: a new temp folder)")
    args = p.parse_args(argv)
    for name in ("batch", "width", "depth"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            p.error(f"--{name} must be a positive whole number")
    if args.time_cap is not None and not (0 < args.time_cap <= 3600):
        p.error("--time-cap must be between 0 and 3600 seconds")
    if not (0 < args.rel_se < 1):
        p.error("--rel-se must be between 0 and 1")
    if args.peak_tflops is not None and not (0 < args.peak_tflops < 1e6):
        p.error("--peak-tflops must be a positive number of TFLOP/s")
    args.dtypes = list(dict.fromkeys(args.dtypes or DTYPE_NAMES))
    return args


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class Config:
    label: str
    precision: str
    loop: Callable
    dtype_name: str | None = None
    tf32: bool = False
    baseline: bool = False
    learner: bool = False


@dataclass
class Outcome:
    config: Config
    row: object
    extra: dict = field(default_factory=dict)


def main(argv=None) -> int:
    args = parse_args(argv)
    path = Path(args.file)
    if not path.is_file():
        say(f"quizapp bench: no such file: {path}")
        return EXIT_USAGE
    try:
        import torch
    except ImportError as exc:
        say(f"quizapp bench: torch is not installed in this Python ({sys.executable}): {exc}")
        return EXIT_USAGE
    if args.device == "cuda" and not torch.cuda.is_available():
        why = f" (torch {torch.__version__} is a CPU build)" if torch.version.cuda is None else \
            f" (torch {torch.__version__} finds no GPU)"
        say(NO_CUDA.format(why=why))
        return EXIT_USAGE
    return Bench(args, path, torch).run()


class Bench:
    def __init__(self, args, path: Path, torch):
        self.args, self.path, self.torch = args, path.resolve(), torch
        self.device = torch.device(args.device)
        self.cuda = self.device.type == "cuda"
        self.report: dict = {"schema": 1, "file": str(args.file), "device_type": self.device.type,
                             "torch": torch.__version__, "cpu_figures": not self.cuda}

    # -- setting up --------------------------------------------------------------------------

    def run(self) -> int:
        from quizapp.bench import model as bench_model
        from quizapp.bench.timing import clock_for, cuda_startup

        torch, args = self.torch, self.args
        if self.cuda:
            self.report["startup"] = cuda_startup(self.device)
            props = torch.cuda.get_device_properties(self.device)
            self.device_name = torch.cuda.get_device_name(self.device)
            self.report["gpu"] = {"name": self.device_name, "capability": list(torch.cuda.get_device_capability()),
                                  "memory_bytes": props.total_memory, "multiprocessors": props.multi_processor_count,
                                  "l2_bytes": getattr(props, "L2_cache_size", None), "cuda": torch.version.cuda}
            width, depth = args.width or bench_model.GPU_WIDTH, args.depth or bench_model.GPU_DEPTH
            batch = args.batch or bench_model.auto_batch(width, depth, props.total_memory)
            self.time_cap = args.time_cap or 15.0
            self.run_seconds = 0.25
        else:
            self.device_name = "CPU"
            # One thread: a tiny model gains nothing from more, and OpenMP's threads waiting on each
            # other on a busy machine make a step 10 to 100 times slower than it is.
            torch.set_num_threads(1)
            width, depth = args.width or bench_model.CPU_WIDTH, args.depth or bench_model.CPU_DEPTH
            batch = args.batch or bench_model.CPU_BATCH
            self.time_cap = args.time_cap or 2.0
            self.run_seconds = 0.05
        self.shape = bench_model.Shape(width, depth, batch)
        self.report["model"] = self.shape.to_json()
        self.clock = clock_for(self.device)
        self.report["timing"] = {"clock": self.clock.kind, "warmup_calls": 2, "warmup_steps": WARMUP_STEPS,
                                 "rel_se_target": args.rel_se, "time_cap_s": self.time_cap,
                                 "l2_flush_bytes": getattr(self.clock, "flush_bytes", None)}
        self.peaks = self.lookup_peaks()
        if self.cuda and not args.no_ceiling:
            self.report["ceilings_tflops"] = optional(self.report, "ceilings", self.ceilings)
        self.report["sandbox"] = self.enter_sandbox()
        solution = self.load_solution()
        if solution is None:
            return EXIT_FAILED
        outcomes = [self.measure(config) for config in self.configs(solution)]
        self.compare(outcomes)
        text = self.render(outcomes)
        print(text, flush=True)
        self.report["rows"] = [{**o.row.to_json(), **o.extra} for o in outcomes]
        if args.json_path:
            Path(args.json_path).write_text(json.dumps(self.report, indent=2, default=str) + "\n", encoding="utf-8")
        failed = [o for o in outcomes if o.config.learner and (o.row.error or o.extra.get("loss_problem"))]
        return EXIT_FAILED if failed else EXIT_OK

    def lookup_peaks(self):
        from quizapp.bench import peaks

        found = peaks.lookup(self.device_name) if self.cuda else None
        if found is None and self.args.peak_tflops:
            found = peaks.given(self.args.peak_tflops)
        self.report["peaks"] = None if found is None else {"family": found.family, "tflops": found.tflops,
                                                           "source": found.source}
        return found

    def ceilings(self) -> dict:
        from quizapp.bench.timing import matmul_ceiling

        torch = self.torch
        say("measuring the matmul ceilings (8192^3 on random data)...")
        found = {}
        for name, dtype, precision in (("bf16", torch.bfloat16, "highest"), ("fp16", torch.float16, "highest"),
                                       ("tf32", torch.float32, "high"), ("fp32", torch.float32, "highest")):
            if name == "bf16" and not torch.cuda.is_bf16_supported():
                continue
            torch.set_float32_matmul_precision(precision)
            found[name] = matmul_ceiling(self.device, dtype)
        torch.set_float32_matmul_precision("highest")
        return found

    def enter_sandbox(self) -> str:
        """Everything trusted is loaded and CUDA is up: from here on the learner's code runs, under the
        grader's sandbox (writes only in a folder of its own and where --json goes)."""
        if self.args.no_sandbox:
            return "off (--no-sandbox)"
        from quizapp.checking import sandbox

        # The caller (quizapp.commands.bench) makes and removes it: the sandbox could not remove it.
        work = Path(self.args.work_dir) if self.args.work_dir else Path(tempfile.mkdtemp(prefix="quizapp-bench-"))
        writable = []
        if self.args.json_path:
            out = Path(self.args.json_path).resolve().parent
            out.mkdir(parents=True, exist_ok=True)
            writable.append(out)
            self.args.json_path = str(Path(self.args.json_path).resolve())
        os.environ["TMPDIR"] = str(work)
        tempfile.tempdir = str(work)
        sandbox.die_with_parent()
        protection = sandbox.apply(work, writable=writable)
        os.chdir(work)
        return protection.describe()

    def load_solution(self):
        from quizapp.checking.loading import describe_load_error, load_module

        try:
            with contextlib.redirect_stdout(sys.stderr):
                module = load_module("solution", self.path)
        except BaseException as exc:  # noqa: BLE001 - any failure to import is the learner's to see
            say(f"quizapp bench: {describe_load_error(exc, str(self.path))}")
            return None
        fn = getattr(module, "train_with_amp", None)
        if not callable(fn):
            say(f"quizapp bench: {self.args.file} defines no function train_with_amp "
                "(the amp_training exercise's loop, which the bench times)")
            return None
        return fn

    def configs(self, solution) -> list[Config]:
        from quizapp.bench.loops import float32_loop, no_sync_loop

        found = [Config("float32 (TF32 off)" if self.cuda else "float32", "fp32", float32_loop, baseline=True)]
        if self.cuda and not self.args.no_tf32_row:
            found.append(Config("float32 (TF32 on)", "tf32", float32_loop, tf32=True))
        for name in self.args.dtypes:
            if self.cuda and name == "bfloat16" and not self.torch.cuda.is_bf16_supported():
                say("this GPU has no bfloat16: its rows are left out")
                continue
            found.append(Config(f"{name}: your loop", PRECISION_OF[name], solution, name, learner=True))
            if self.cuda and not self.args.no_sync_rows:
                found.append(Config(f"{name}: no per-step sync", PRECISION_OF[name], no_sync_loop, name))
        return found

    # -- measuring one configuration ---------------------------------------------------------------

    def measure(self, config: Config) -> Outcome:
        from quizapp.bench.table import Row

        say(f"{config.label}: warming up...")
        row = Row(label=config.label, precision=config.precision, baseline=config.baseline)
        extra: dict = {"loop": "learner" if config.learner else config.loop.__name__, "tf32": config.tf32,
                       "amp_dtype": config.dtype_name}
        try:
            self._measure(config, row, extra)
        except Exception as exc:  # noqa: BLE001 - a failing loop is reported in its row, the others go on
            from quizapp.checking.loading import describe_exception

            row.error = describe_exception(exc, str(self.path)) if config.learner else f"{type(exc).__name__}: {exc}"
            say(f"{config.label}: failed: {row.error}")
        finally:
            self.release()
        return Outcome(config, row, extra)

    def release(self) -> None:
        gc.collect()
        if self.cuda:
            self.torch.cuda.synchronize(self.device)
            self.torch.cuda.empty_cache()

    def _measure(self, config: Config, row, extra: dict) -> None:
        from quizapp.bench import model as bench_model
        from quizapp.bench.flops import achieved_tflops, counted_flops
        from quizapp.bench.stats import measure_until
        from quizapp.bench.timing import MarkedLoader, count_syncs

        torch, clock, shape = self.torch, self.clock, self.shape
        torch.set_float32_matmul_precision("high" if config.tf32 else "highest")
        self.release()
        if self.cuda:
            torch.cuda.reset_peak_memory_stats(self.device)
        model, optimizer, batch, loss_fn = bench_model.build(shape, self.device)
        if self.cuda:
            extra["allocated_before_bytes"] = torch.cuda.memory_allocated(self.device)
        dtype = getattr(torch, config.dtype_name) if config.dtype_name else None

        def call(loader):
            kwargs = {"device": self.device, "max_grad_norm": None}
            if dtype is not None:
                kwargs["amp_dtype"] = dtype
            with contextlib.redirect_stdout(sys.stderr):
                return config.loop(model, loader, optimizer, loss_fn, 1, **kwargs)

        t0 = clock.now()
        losses = call(MarkedLoader(batch, WARMUP_STEPS))
        row.first_call_s = clock.now() - t0
        extra["first_losses"] = losses_of(losses)
        clock.reset()
        call(MarkedLoader(batch, WARMUP_STEPS, clock))
        warm = clock.intervals()
        estimate = statistics.median(warm) if warm else self.run_seconds
        steps = max(3, min(50, math.ceil(self.run_seconds / max(estimate, 1e-6))))
        whole_call = []

        def run_once():
            clock.flush()
            clock.reset()
            start = clock.now()
            call(MarkedLoader(batch, steps, clock))
            elapsed = clock.now() - start
            marks = clock.intervals()
            if len(marks) != steps or sum(marks) < 0.5 * elapsed:
                # The loop took the batches faster than it ran them (e.g. list(loader) first): per call.
                whole_call.append(True)
                return [elapsed / steps]
            return marks

        measurement = measure_until(run_once, rel_se=self.args.rel_se, min_runs=MIN_RUNS, time_cap=self.time_cap)
        extra["measurement"] = measurement.to_json()
        extra["steps_per_run"] = steps
        extra["timed_per_call"] = bool(whole_call)
        s = measurement.summary
        row.step_s, row.rel_se, row.steps, row.converged = s.median, s.rel_se, s.n, measurement.converged
        row.samples_per_s = shape.batch / s.median
        row.tflops = achieved_tflops(shape.step_flops, s.median)
        peak = self.peaks.tflops.get(config.precision) if self.peaks else None
        row.mfu = row.tflops / peak if peak and row.tflops else None
        if self.cuda:
            # The clock's L2-flush buffer is live through every configuration: not the loop's memory.
            row.peak_bytes = torch.cuda.max_memory_allocated(self.device) - getattr(clock, "flush_bytes", 0)
            row.above_state_bytes = row.peak_bytes - shape.state_bytes
            syncs = optional(extra, "syncs", lambda: count_syncs(lambda: call(MarkedLoader(batch, 4))))
            row.syncs_per_step = None if syncs is None else syncs / 4
        extra["counted_step_flops"] = optional(extra, "flop count", lambda: counted_flops(
            lambda: call(MarkedLoader(batch, 1))))
        say(f"{config.label}: {s.median * 1e3:.4g} ms/step (median of {s.n} steps in {measurement.runs} runs, "
            f"standard error {s.rel_se * 100:.2f}%)")

    # -- comparing and reporting ---------------------------------------------------------------

    def compare(self, outcomes: list[Outcome]) -> None:
        base = next((o for o in outcomes if o.config.baseline), None)
        if base is None or base.row.step_s is None:
            return
        base_losses = base.extra.get("first_losses") or []
        for o in outcomes:
            r = o.row
            if r.step_s is not None:
                r.speedup = base.row.step_s / r.step_s
            if r.peak_bytes and base.row.peak_bytes:
                r.mem_saved = 1 - r.peak_bytes / base.row.peak_bytes
            losses = o.extra.get("first_losses")
            if o.config.learner and r.error is None:
                problem = loss_problem(losses, base_losses)
                if problem:
                    o.extra["loss_problem"] = problem

    def render(self, outcomes: list[Outcome]) -> str:
        from quizapp.bench.table import format_report_bars, format_table, si

        torch, shape, rows = self.torch, self.shape, [o.row for o in outcomes]
        lines = []
        if not self.cuda:
            lines += ["=" * 78,
                      "CPU FIGURES (--device cpu): a dry run on a tiny model, not a GPU measurement. No tensor",
                      "cores, no asynchronous execution, no peak-memory counter, no MFU: these numbers show that",
                      "the loop runs and how the bench reports, not how fast it will be on a GPU.",
                      "=" * 78]
        lines.append(f"quizapp bench: {self.args.file} (train_with_amp)")
        if self.cuda:
            gpu = self.report["gpu"]
            lines.append(f"device: {gpu['name']} (compute capability {gpu['capability'][0]}.{gpu['capability'][1]}, "
                         f"{gpu['memory_bytes'] / 2**30:.1f} GiB), torch {torch.__version__}, CUDA {gpu['cuda']}")
        else:
            lines.append(f"device: CPU ({os.cpu_count()} cores, {torch.get_num_threads()} torch thread), "
                         f"torch {torch.__version__}")
        lines.append(f"model: {shape.describe()}")
        counted = {o.extra.get("counted_step_flops") for o in outcomes if o.extra.get("counted_step_flops")}
        agree = "FlopCounterMode counts the same" if counted == {shape.step_flops} else \
            f"FlopCounterMode counted {', '.join(si(c, 'FLOP', 4) for c in sorted(counted))}"
        lines.append(f"work: {si(shape.step_flops, 'FLOP', 4)} per step (matmuls, forward and "
                     f"backward; by formula; {agree})")
        timing = self.report["timing"]
        if self.cuda:
            lines.append(f"timing: CUDA events between the batches the loop takes; L2 flushed "
                         f"({timing['l2_flush_bytes'] / 2**20:.0f} MiB written) before each run; "
                         f"median step after 2 warm-up calls, runs repeated until the standard error < "
                         f"{self.args.rel_se * 100:g}% of the mean or {self.time_cap:g} s per configuration; "
                         f"TF32 off except where a row says on")
            st = self.report["startup"]
            lines.append(f"start-up, kept out of the timings: CUDA context {st['context_s']:.2f} s, "
                         f"first cuBLAS matmul {st['first_matmul_s']:.2f} s")
        else:
            lines.append(f"timing: host clock between the batches the loop takes; median step after 2 warm-up "
                         f"calls, until the standard error < {self.args.rel_se * 100:g}% of the mean or "
                         f"{self.time_cap:g} s per configuration")
        lines += ["", format_table(rows, cpu=not self.cuda), ""]
        lines += self.footnotes(outcomes)
        lines += ["", format_report_bars(rows, cpu=not self.cuda)]
        if not self.cuda:
            lines += ["", "CPU FIGURES: see the note at the top."]
        return "\n".join(lines)

    def footnotes(self, outcomes: list[Outcome]) -> list[str]:
        from quizapp.bench.table import MIB, si, significant

        shape, notes = self.shape, []
        base = next((o.row.label for o in outcomes if o.config.baseline), "float32")
        notes.append(f"speedup, mem saved: against {base}.")
        if self.cuda:
            notes.append(f"above state: the peak less the float32 model state (weights, gradients, AdamW moments: "
                         f"16 B x {si(shape.params)} parameters = {shape.state_bytes / MIB:,.0f} MiB), "
                         f"which autocast does not shrink; it holds the batch, activations and workspaces.")
            notes.append("syncs/step: the host waited for the GPU this often per step "
                         "(torch.cuda.set_sync_debug_mode('warn')): loss.item(), GradScaler's inf check, ...")
        if self.peaks:
            rates = ", ".join(f"{k} {v:g}" for k, v in self.peaks.tflops.items())
            notes.append(f"MFU: achieved TFLOP/s over the dense peak of the row's precision on {self.peaks.family}: "
                         f"{rates} TFLOP/s (source: {self.peaks.source}).")
        elif self.cuda:
            notes.append(f"MFU: no datasheet peak is known for '{self.device_name}'; pass --peak-tflops "
                         "(the dense 16-bit rate) to get one.")
        else:
            notes.append("MFU: none on the CPU (no datasheet peak; the figure would mean nothing).")
        ceilings = self.report.get("ceilings_tflops")
        if ceilings:
            notes.append("matmul ceilings measured here (8192^3, random data): "
                         + ", ".join(f"{k} {significant(v)}" for k, v in ceilings.items()) + " TFLOP/s.")
        firsts = [f"{o.row.label} {o.row.first_call_s:.2f} s" for o in outcomes if o.row.first_call_s is not None]
        if firsts:
            notes.append(f"first call ({WARMUP_STEPS} steps, start-up included): " + "; ".join(firsts) + ".")
        if any(not o.row.converged and o.row.step_s is not None for o in outcomes):
            notes.append(f"*: the time cap came before the standard error fell under {self.args.rel_se * 100:g}%.")
        for o in outcomes:
            if o.extra.get("timed_per_call"):
                notes.append(f"{o.row.label}: the loop took its batches before running them; timed per call.")
            counted = o.extra.get("counted_step_flops")
            if o.config.learner and counted and abs(counted / shape.step_flops - 1) > 0.01:
                notes.append(f"{o.row.label}: the loop ran {counted / shape.step_flops:.2f}x the model's matmul "
                             "FLOPs per step (a second forward?); MFU counts the model's only.")
            if o.extra.get("loss_problem"):
                notes.append(f"{o.row.label}: {o.extra['loss_problem']}; grade it first (quizapp grade).")
            if o.row.error:
                notes.append(f"{o.row.label}: FAILED: {o.row.error}")
            notes += [f"{o.row.label}: could not measure the {p}" for p in o.extra.get("problems", ())]
        notes += [f"could not measure the {p}" for p in self.report.get("problems", ())]
        sandbox = self.report["sandbox"]
        notes.append(sandbox if sandbox.startswith("sandbox") else f"sandbox: {sandbox}")
        return notes


def optional(record: dict, what: str, fn: Callable):
    """fn(), or None when it raises: a figure that is only extra (the matmul ceilings, the sync count, the
    FLOP count) never costs the rest of the report; what went wrong is kept in `record`."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - reported, and the bench goes on
        record.setdefault("problems", []).append(f"{what}: {type(exc).__name__}: {exc}")
        say(f"quizapp bench: could not measure the {what}: {type(exc).__name__}: {exc}")
        return None


def losses_of(value) -> list | None:
    """The loop's returned losses as floats, or None when it returned something else."""
    try:
        return [float(v) for v in value]
    except Exception:  # noqa: BLE001 - the learner's return value may be anything
        return None


def loss_problem(losses, base_losses) -> str | None:
    """Why a loop's losses cannot be right (compared with float32's on the same model and data), or None."""
    if not losses:
        return f"the loop returned {losses!r}, not one loss per epoch"
    if not all(math.isfinite(v) for v in losses):
        return f"the loop returned non-finite losses {losses}"
    if base_losses and abs(losses[0] - base_losses[0]) > LOSS_RTOL * abs(base_losses[0]):
        return (f"its first epoch's loss {losses[0]:.6g} is {abs(losses[0] / base_losses[0] - 1) * 100:.1f}% "
                f"from float32's {base_losses[0]:.6g}")
    return None
