"""The bench's report as plain text: one row per configuration, then bars to read it at a glance.

No torch here: rows are plain numbers, so the tests format them without a GPU.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

BAR_WIDTH = 40
_EIGHTHS = " ▏▎▍▌▋▊▉"
MIB = 1024 * 1024


@dataclass
class Row:
    label: str
    precision: str  # fp32, tf32, fp16 or bf16: which peak its MFU is taken against
    step_s: float | None = None  # median step time; None when the run failed
    rel_se: float | None = None  # standard error over mean of the step times
    steps: int = 0  # timed steps
    converged: bool = False  # the standard error fell under its target before the time cap
    samples_per_s: float | None = None
    peak_bytes: int | None = None  # torch.cuda.max_memory_allocated over the configuration
    above_state_bytes: int | None = None  # the peak less the fp32 model state (weights, grads, AdamW moments)
    speedup: float | None = None  # baseline step time over this one
    mem_saved: float | None = None  # 1 - peak / baseline peak
    tflops: float | None = None
    mfu: float | None = None  # a fraction of the dense peak
    syncs_per_step: float | None = None  # host-device syncs per step (CUDA's sync debug mode)
    first_call_s: float | None = None  # the first call of the loop, start-up included
    error: str | None = None
    baseline: bool = False

    def to_json(self) -> dict:
        return asdict(self)


def significant(value: float, digits: int = 3) -> str:
    """`value` to `digits` significant figures, without exponent for everyday magnitudes."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(value)))))
    return f"{value:,.{decimals}f}"


def si(value: float, unit: str = "", digits: int = 3) -> str:
    """`value` with an SI prefix and `digits` significant figures: 6.6e12 FLOP -> "6.60 TFLOP"."""
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{significant(value / factor, digits)} {prefix}{unit}"
    return f"{significant(value, digits)} {unit}".rstrip()


def _ms(row: Row) -> str:
    return significant(row.step_s * 1e3) if row.step_s is not None else "failed"


def _se(row: Row) -> str:
    if row.rel_se is None or not math.isfinite(row.rel_se):
        return "-"
    return f"{row.rel_se * 100:.1f}%" + ("" if row.converged else "*")


def _int(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _mib(value: int | None) -> str:
    return "-" if value is None else f"{value / MIB:,.0f}"


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _tflops(value: float | None) -> str:
    if value is None:
        return "-"
    return significant(value) if value >= 0.01 else f"{value:.2g}"


def _syncs(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


COLUMNS = (
    ("config", lambda r: r.label, "<"),
    ("ms/step", _ms, ">"),
    ("±SE", _se, ">"),
    ("steps", lambda r: str(r.steps) if r.steps else "-", ">"),
    ("samples/s", lambda r: _int(r.samples_per_s), ">"),
    ("peak MiB", lambda r: _mib(r.peak_bytes), ">"),
    ("above state", lambda r: _mib(r.above_state_bytes), ">"),
    ("speedup", lambda r: _times(r.speedup), ">"),
    ("mem saved", lambda r: _pct(r.mem_saved), ">"),
    ("TFLOP/s", lambda r: _tflops(r.tflops), ">"),
    ("MFU", lambda r: _pct(r.mfu), ">"),
    ("syncs/step", lambda r: _syncs(r.syncs_per_step), ">"),
)


def format_table(rows: list[Row], *, cpu: bool = False) -> str:
    """The table, one line per row, columns aligned. On the CPU the time column says so."""
    headers = [("CPU ms/step" if cpu and name == "ms/step" else name) for name, _, _ in COLUMNS]
    cells = [[fn(r) for _, fn, _ in COLUMNS] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(headers)]
    aligns = [a for _, _, a in COLUMNS]

    def line(values: list[str]) -> str:
        return "  ".join(f"{v:{a}{w}}" for v, a, w in zip(values, aligns, widths)).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(c) for c in cells]
    return "\n".join(out)


def bar(value: float, top: float, width: int = BAR_WIDTH) -> str:
    """A horizontal bar `value / top` of `width` characters long, in eighths of a character."""
    if top <= 0 or value <= 0 or not math.isfinite(value):
        return ""
    eighths = round(min(value / top, 1.0) * width * 8)
    full, part = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[part] if part else "") or "▏"


def format_bars(title: str, items: list[tuple[str, float | None]], unit: str, *, digits: int = 3) -> str:
    """One bar per (label, value), scaled to the largest value; a missing value is shown as such."""
    present = [v for _, v in items if v is not None and math.isfinite(v) and v > 0]
    top = max(present) if present else 0.0
    width = max((len(label) for label, _ in items), default=0)
    out = [title]
    for label, value in items:
        if value is None:
            out.append(f"  {label:<{width}}  (none)")
        else:
            out.append(f"  {label:<{width}}  {bar(value, top)} {significant(value, digits)}{unit}")
    return "\n".join(out)


def format_report_bars(rows: list[Row], *, cpu: bool = False) -> str:
    """The bars at a glance: step time, speedup against the baseline, peak memory when known."""
    where = "CPU " if cpu else ""
    parts = [format_bars(f"{where}step time (ms; shorter is faster)",
                         [(r.label, None if r.step_s is None else r.step_s * 1e3) for r in rows], " ms")]
    if any(r.speedup is not None for r in rows):
        parts.append(format_bars("speedup against the float32 baseline (longer is faster)",
                                 [(r.label, r.speedup) for r in rows], "x"))
    if any(r.peak_bytes is not None for r in rows):
        parts.append(format_bars("peak memory (MiB; max_memory_allocated)",
                                 [(r.label, None if r.peak_bytes is None else r.peak_bytes / MIB) for r in rows],
                                 " MiB", digits=4))
    return "\n\n".join(parts)
