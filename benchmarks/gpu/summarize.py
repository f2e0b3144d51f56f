"""Write SUMMARY.md from what benchmarks/gpu/run.sh left in its output folder: the machine, each step's
status and time, the CUDA tests' verdict, the grades with `--device cuda` (wall times, and every buggy
file that CUDA judged otherwise than the CPU), the bench's table, and the common claims about mixed
precision that benchmarks/RESULTS.md lists, set against the bench's figures. Standard library only;
every input may be missing (a step that did not run).

    python benchmarks/gpu/summarize.py OUT_DIR
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tests" / "cuda"))

import grade_all  # noqa: E402 - found through the path above
import matrix  # noqa: E402

MESSAGE_CHARS = 400


def read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_lines(path: Path) -> list[dict]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def clip(text: str, n: int = MESSAGE_CHARS) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= n else text[:n - 1] + "…"


def machine(env: dict | None) -> list[str]:
    if not env:
        return ["(no env.json: the environment step did not run)"]
    keys = [("gpu", "GPU"), ("driver", "driver"), ("torch", "torch"), ("torch_cuda", "torch's CUDA"),
            ("cuda_available", "CUDA available"), ("python", "python"), ("python_path", "python path"),
            ("cpu_count", "CPU cores"), ("installed", "installed by run.sh")]
    return [f"- {label}: {env[k]}" for k, label in keys if env.get(k) not in (None, "", [])]


def steps_table(steps: list[dict]) -> list[str]:
    if not steps:
        return ["(no steps recorded)"]
    out = ["| step | status | seconds | limit | exit | note |", "| --- | --- | ---: | ---: | ---: | --- |"]
    for s in steps:
        out.append(f"| {s.get('step')} | {s.get('status')} | {s.get('seconds', '')} | {s.get('limit', '')} | "
                   f"{s.get('rc', '')} | {clip(s.get('note', ''), 200)} |")
    return out


def tests_section(log: Path) -> list[str]:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ["(no tests.log: the tests step did not run)"]
    finals = [line.strip("= ").strip() for line in text.splitlines()
              if re.search(r"\b(passed|failed|skipped|deselected|error|errors|no tests ran)\b", line)
              and line.startswith("=")]
    bad = [line for line in text.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    out = [f"- pytest: {f}" for f in finals] or ["- pytest printed no final line (stopped early?)"]
    if bad:
        out += ["", "Failed or errored:", ""] + [f"- `{clip(line, 300)}`" for line in bad[:60]]
        if len(bad) > 60:
            out.append(f"- … and {len(bad) - 60} more (tests.log)")
    return out


def grades_section(grades: dict | None) -> list[str]:
    if not grades:
        return ["(no grades.json: the grading step did not run)"]
    results = grades.get("grades", [])
    done = [r for r in results if r["status"] != "not-run"]
    out = [f"{len(done)} of {len(results)} grades made in {grades.get('elapsed_s')} s "
           f"({grades.get('workers')} at a time after the CUDA references, which ran alone; "
           f"complete: {grades.get('complete')}).", "", "```", grade_all.table(results), "```", ""]
    refs = [r for r in done if r["kind"] == "reference" and r["device"] == "cuda" and r["status"] != "pass"]
    for r in refs:
        failing = {c["id"]: c["message"] for c in r["report"].get("checks", []) if c["status"] in ("fail", "error")}
        out.append(f"- reference {r['exercise']} does not pass on CUDA: {clip(r['report'].get('message'))} "
                   + "; ".join(f"{k}: {clip(v, 200)}" for k, v in failing.items()))
    devices = {}
    for r in done:
        if r["kind"] == "buggy":
            devices.setdefault(r["file"], set()).add(r["device"])
    files = sorted(f for f, on in devices.items() if on == {"cuda", "cpu"})
    differ = [f for f in files if grade_all.verdicts_differ(results, f)]
    if differ:
        out += ["", "Buggy files CUDA judged otherwise than the CPU:", ""]
        for f in differ:
            pair = {r["device"]: r["report"] for r in results if r["file"] == f and r["kind"] == "buggy"}
            only_cuda, only_cpu = matrix.verdicts_differ(pair["cpu"], pair["cuda"])
            parts = [f"fails on CUDA only: {c} ({clip(m, 250)})" for c, m in only_cuda.items()]
            parts += [f"passes on CUDA only: {c}" for c in only_cpu]
            out.append(f"- `{f}`: " + "; ".join(parts))
    elif files:
        out.append(f"All {len(files)} buggy files graded on both devices failed the same checks on CUDA as on the CPU.")
    else:
        out.append("No buggy file was graded on both devices: nothing to compare.")
    not_run = len(results) - len(done)
    if not_run:
        out.append(f"\n{not_run} grades were not made within the time budget: "
                   "`bash benchmarks/gpu/run.sh --only grade,tests` grades them in a call of their own.")
    return out


def bench_section(out_dir: Path, bench: dict | None) -> list[str]:
    try:
        text = (out_dir / "bench.txt").read_text(encoding="utf-8")
    except OSError:
        text = ""
    if not text and not bench:
        return ["(no bench output: the bench step did not run)"]
    return ["```", text.rstrip(), "```"] if text else ["(bench.txt is empty: see run.log)"]


def claims_section(bench: dict | None) -> list[str]:
    """The common claims that benchmarks/RESULTS.md lists, against the figures."""
    if not bench or not bench.get("rows"):
        return ["(no bench figures to set the claims against)"]
    rows = {r["label"]: r for r in bench["rows"]}
    tf32 = rows.get("float32 (TF32 on)")
    out = []
    if bench.get("cpu_figures"):
        out.append("These are CPU figures (a dry run): they say nothing of the GPU claims below.")
    for name in ("float16", "bfloat16"):
        r = rows.get(f"{name}: your loop")
        if not r or r.get("step_s") is None:
            continue
        vs_tf32 = (f"; {tf32['step_s'] / r['step_s']:.2f}x against float32 with TF32 on"
                   if tf32 and tf32.get("step_s") else "")
        saved = "" if r.get("mem_saved") is None else f"; peak memory {r['mem_saved'] * 100:.0f}% below float32's"
        mfu = "" if r.get("mfu") is None else f"; MFU {r['mfu'] * 100:.0f}%"
        out.append(f"- {name}: {r['speedup']:.2f}x float32's step (TF32 off){vs_tf32}{saved}{mfu}.")
    out += ["", "\"2-8x faster\" holds if the speedups above against TF32 off fall in 2 to 8; "
            "\"nearly halves memory\" if the peak saving is near 50%."]
    return out


def summarize(out_dir: Path) -> str:
    steps = read_lines(out_dir / "steps.jsonl")
    env = read_json(out_dir / "env.json")
    dry = any(s.get("status") == "dry" for s in steps) or bool(env and env.get("dry_run"))
    bench = read_json(out_dir / "bench.json")
    lines = ["# GPU programme: summary", ""]
    if dry:
        lines += ["**DRY RUN** on a machine without CUDA: the plan was checked, nothing was measured on a GPU.", ""]
    lines += ["## Machine", ""] + machine(env)
    lines += ["", "## Steps", ""] + steps_table(steps)
    lines += ["", "## Tests: tests/cuda and the CUDA-gated facts of tests/facts", ""] + tests_section(out_dir / "tests.log")
    lines += ["", "## Grades with --device cuda (and --device cpu beside them)", ""] + grades_section(
        read_json(out_dir / "grades.json"))
    lines += ["", "## Bench: quizapp bench on the amp_training reference", ""] + bench_section(out_dir, bench)
    lines += ["", "## Common claims about mixed precision", ""] + claims_section(bench)
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: summarize.py OUT_DIR", file=sys.stderr)
        return 2
    out_dir = Path(argv[0])
    (out_dir / "SUMMARY.md").write_text(summarize(out_dir), encoding="utf-8")
    print(f"wrote {out_dir / 'SUMMARY.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
