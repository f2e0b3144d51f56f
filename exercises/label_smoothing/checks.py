"""Behavioural checks for label_smoothing: call the learner's loss and torch's built-in
`F.cross_entropy(..., label_smoothing=...)` on identical logits and compare values and gradients;
watch torch's cross-entropy kernel to see whether the built-in smoothing did the work."""

from __future__ import annotations

import contextlib
import math
import traceback
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from quizapp.checking.harness import (
    EXACT,
    FLOAT32,
    CheckFailed,
    Checks,
    CheckSkipped,
    ForeignSkip,
    Required,
    Tol,
    fail,
    fmt,
    is_close,
    mismatch,
    nothing_to_check,
    rel_diff,
    tolerance_for,
)
from quizapp.checking.harness import as_scalar as scalar_of

# (rows, classes, smoothing): both ends of smoothing, two classes, a thousand, a single row.
GRID = [
    (8, 5, 0.1), (8, 2, 0.0), (16, 10, 0.5), (4, 1000, 0.1),
    (1, 3, 1.0), (32, 7, 0.1), (6, 4, 1.0), (12, 3, 0.3),
]
# (rows, classes, smoothing, ignore_index, ignored rows): the default -100, and a class id.
IGNORE_CASES = [
    (10, 5, 0.1, -100, (1, 4, 9)),
    (8, 4, 0.2, 2, ()),  # rows whose target is class 2 are ignored: ignore_index may be any value
    (6, 3, 1.0, -1, (0, 5)),
]
# (rows, classes, smoothing, ignore_index, ignored rows): ignore_index values that are no class ids
# at all; F.cross_entropy accepts any int and only compares the targets with it.
OUT_OF_RANGE_CASES = [
    (10, 5, 0.1, 5, (1, 4, 9)),          # C itself
    (8, 4, 0.2, 9, (0, 3)),              # C + 5
    (6, 3, 1.0, 1_000_000, (2,)),        # a large positive value
]
# (rows, classes, smoothing, ignore_index): every target is ignore_index. F.cross_entropy gives nan
# (0 / 0) with an all-zero gradient (measured in torch 2.13, float32/float16/bfloat16/float64 alike).
ALL_IGNORED_CASES = [(4, 5, 0.1, -100), (6, 3, 1.0, 2)]
# (rows, classes, smoothing), run in each of DTYPES; no ignored rows (the ignore-index checks grade
# those). Sizes are kept small on purpose: F.cross_entropy's own float16 smoothing term sums -log p
# over every kept row and class in float16 and overflows to inf past 65504 (8 rows of 1000 classes
# already do), and the grader compares with torch's value on the same dtype.
DTYPE_CASES = [(10, 5, 0.1), (16, 100, 0.5), (6, 3, 0.0)]
DTYPES = (torch.bfloat16, torch.float16, torch.float64)
# dtype -> (value rtol, gradient tolerance as a fraction of the largest gradient entry), against
# F.cross_entropy run on the same logits in that dtype. Measured over 1500 seeds of DTYPE_CASES'
# shapes (with and without ignored rows) with seven correct implementations (this reference,
# F.nll_loss + masked mean, soft targets fed to F.cross_entropy, a scattered target distribution,
# HF-style masked_fill sums, and upcasting to float32 or float64 and casting back): value within
# 1.9 eps (float16), 2.0 eps (bfloat16), 2.3 eps (float64) of torch's; gradient within 1.3 eps of
# the largest entry (all three). Torch's own float16/bfloat16 value is itself 1.5-1.6 eps from the
# float64 truth. Half types get 4 eps; float64 gets 1e-12 (thousands of eps, yet 1e5 below float32's
# rounding, so a float32 computation of a float64 loss is caught): the harness's tolerances by dtype,
# whose rtol bounds the gradient too, of its largest entry.
DTYPE_TOL = {dtype: (tolerance_for(dtype), Tol(rtol=tolerance_for(dtype).rtol, of_largest=True))
             for dtype in (torch.float16, torch.bfloat16, torch.float64)}
BIG = 1e4
# Same formula in another op order differs by ~1e-7 in float32; the smallest bug (C - 1 instead
# of C) moves the value by more than 1e-3 of it.
VALUE_TOL = FLOAT32
GRAD_TOL = Tol(rtol=1e-4, of_largest=True)  # of the largest gradient entry
BAD_SMOOTHING = (-0.1, 1.5, 2.0)

CHECKS = Checks(
    Required("label_smoothing_cross_entropy",
             "(logits, targets, *, smoothing=0.1, ignore_index=-100) -> torch.Tensor",
             sample_args=(None, None), sample_kwargs={"smoothing": 0.1, "ignore_index": -100}),
)


# -- watching torch's cross-entropy ------------------------------------------------------------

_BUILTIN_SMOOTHING: list[float] = []


class _CrossEntropyCalls(TorchFunctionMode):
    """Sees every call of torch's cross-entropy at the torch-function level, however it was reached:
    F.cross_entropy, nn.CrossEntropyLoss, torch._C._nn.cross_entropy_loss (looked up now or captured
    at import) and torch.ops.aten.cross_entropy_loss alike. (At the dispatcher below it, the kernel is
    already taken apart into log_softmax and nll_loss: the call itself is seen here.)"""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name in ("cross_entropy", "cross_entropy_loss", "cross_entropy_loss.default"):
            smoothing = kwargs.get("label_smoothing", args[_SMOOTHING_AT[name]] if len(args) > _SMOOTHING_AT[name]
                                   else 0.0)
            try:
                _BUILTIN_SMOOTHING.append(float(smoothing))
            except (TypeError, ValueError):
                _BUILTIN_SMOOTHING.append(float("nan"))  # not a number: never the grader's 0
        return func(*args, **kwargs)


# Where label_smoothing sits among the positional arguments: F.cross_entropy(input, target, weight,
# size_average, ignore_index, reduce, reduction, label_smoothing); the kernel (input, target, weight,
# reduction, ignore_index, label_smoothing).
_SMOOTHING_AT = {"cross_entropy": 7, "cross_entropy_loss": 5, "cross_entropy_loss.default": 5}


@contextlib.contextmanager
def watch_builtin_smoothing():
    """Record the label_smoothing every cross-entropy call passes to torch, however it was reached."""
    with _CrossEntropyCalls():
        yield


# -- runs ------------------------------------------------------------------------------------

def make_inputs(ctx, rows, classes, seed, scale=3.0, ignore_index=-100, ignored=(), dtype=torch.float32,
                device=None):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(rows, classes, generator=g) * scale
    targets = torch.randint(0, classes, (rows,), generator=g)
    for i in ignored:
        targets[i] = ignore_index
    device = ctx.device if device is None else device
    return logits.to(device, dtype), targets.to(device)


def dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


@dataclass
class Run:
    value: object
    grad: torch.Tensor | None
    builtin: list = field(default_factory=list)  # label_smoothing values passed to torch's kernel


def call(ctx, logits, targets, smoothing, ignore_index=-100) -> Run:
    x = logits.clone().requires_grad_(True)
    size = f", logits ~{BIG:.0e}" if logits.abs().max().item() >= BIG / 10 else ""
    ignore = f", ignore_index={ignore_index}" if ignore_index != -100 else ""
    kind = f", {dtype_name(x.dtype)} logits" if x.dtype != torch.float32 else ""
    start = len(_BUILTIN_SMOOTHING)
    with ctx.given(f"{len(x)} rows of {x.shape[1]} classes, smoothing={smoothing}{ignore}{size}{kind}"), \
            watch_builtin_smoothing():
        out = ctx.solution.label_smoothing_cross_entropy(x, targets.clone(), smoothing=smoothing,
                                                         ignore_index=ignore_index)
        if isinstance(out, torch.Tensor) and out.requires_grad and out.numel() == 1:
            out.sum().backward()
    return Run(out, x.grad, _BUILTIN_SMOOTHING[start:])


def torch_run(logits, targets, smoothing, ignore_index=-100) -> Run:
    x = logits.clone().requires_grad_(True)
    out = F.cross_entropy(x, targets, label_smoothing=smoothing, ignore_index=ignore_index)
    out.backward()
    return Run(out.detach(), x.grad)


def raised(ctx, exc: BaseException) -> str:
    """'TypeError: its message (line 12: the learner's line)' for an exception out of the solution."""
    try:
        text = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    except Exception:  # noqa: BLE001 - a learner's exception whose __str__ fails
        text = ""
    head = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    try:
        mine = Path(ctx.solution.__file__).resolve()
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == mine]
    except Exception:  # noqa: BLE001 - no file to point at: the message alone
        frames = []
    if frames and frames[-1].line:
        head += f" (line {frames[-1].lineno}: {frames[-1].line.strip()[:200]})"
    return head


def attempt(ctx, run, where: str, cause: str, baseline):
    """run(); an exception out of the solution fails the check, naming the inputs and `cause`, unless
    `baseline()` (the same kind of call on ordinary inputs) raises too: then the solution fails on
    ordinary inputs as well, and that error is reported as it is, with the inputs that raised it.
    Pass functools.partial objects, not lambdas, when calling from a loop."""
    try:
        return run()
    except (CheckFailed, CheckSkipped, ForeignSkip):
        raise
    except Exception as exc:  # noqa: BLE001 - the crash on these inputs is the finding
        baseline()
        fail(f"{where}: your function raised {raised(ctx, exc)}; {cause}")


def as_scalar(value, where: str) -> float:
    return scalar_of(value, where, "a scalar loss (the mean over rows)")


def variants(logits, targets, smoothing, ignore_index=-100) -> dict:
    """Usual mistakes, to name the one a wrong answer matches."""
    log_p = F.log_softmax(logits, -1)
    keep = targets != ignore_index
    nll = -log_p.gather(-1, torch.where(keep, targets, 0).unsqueeze(-1)).squeeze(-1)
    classes = logits.shape[-1]
    uniform = -log_p.mean(-1)
    others = (-log_p.sum(-1) - nll) / max(classes - 1, 1)
    zero = torch.zeros_like(nll)
    per_row = torch.where(keep, (1 - smoothing) * nll + smoothing * uniform, zero)
    n_keep = keep.sum()
    return {
        "smoothing is spread over the C - 1 other classes; PyTorch spreads smoothing / C over all C classes, "
        "the labelled one included": torch.where(keep, (1 - smoothing) * nll + smoothing * others, zero).sum() / n_keep,
        "the mean divides by all rows, ignored ones included; divide by the number of kept rows":
            per_row.sum() / len(targets),
        "the uniform (smoothing) term is averaged over all rows, ignored ones included (F.nll_loss drops them "
        "from the other term); mask both terms":
            (1 - smoothing) * torch.where(keep, nll, zero).sum() / n_keep + smoothing * uniform.mean(),
        "ignored rows still count in the uniform (smoothing) term; mask both terms":
            ((1 - smoothing) * torch.where(keep, nll, zero).sum() + smoothing * uniform.sum()) / n_keep,
        "the rows are summed, not averaged": per_row.sum(),
        "smoothing is not applied (plain cross-entropy)": torch.where(keep, nll, zero).sum() / n_keep,
        "the smoothing term uses the sum over classes instead of the mean (smoothing / C on each class)":
            torch.where(keep, (1 - smoothing) * nll + smoothing * uniform * classes, zero).sum() / n_keep,
    }


def diagnose(logits, targets, smoothing, ignore_index=-100, *, seen_value=None, seen_grad=None,
             value_tol: Tol = VALUE_TOL, grad_tol: Tol = GRAD_TOL) -> str:
    for why in variants(logits, targets, smoothing, ignore_index):
        x = logits.clone().requires_grad_(True)
        v = variants(x, targets, smoothing, ignore_index)[why]
        if smoothing == 0 and "smoothing" in why and "ignored" not in why:
            continue  # these variants coincide with the right answer when smoothing is 0
        if seen_grad is not None:
            v.backward()
            if is_close(seen_grad, x.grad, grad_tol):
                return f" Your gradient matches a loss where {why}."
        elif seen_value is not None and is_close(seen_value, v.item(), value_tol):
            return f" Your value matches a loss where {why}."
    return ""


def compare(where, logits, targets, smoothing, mine: Run, expected: Run, ignore_index=-100, *,
            gradient: bool, value_tol: Tol = VALUE_TOL, grad_tol: Tol = GRAD_TOL, why: str = "") -> None:
    seen, want = as_scalar(mine.value, where), as_scalar(expected.value, where)
    tols = {"value_tol": value_tol, "grad_tol": grad_tol}
    if not gradient:
        if not is_close(seen, want, value_tol):
            show = fmt if value_tol.rtol >= 1e-6 else "{:.15g}".format  # float64: enough digits to see the difference
            fail(f"{where}: expected loss {show(want)} (F.cross_entropy with label_smoothing={smoothing}), got "
                 f"{show(seen)} (relative difference {rel_diff(seen, want):.2e}, tolerance {value_tol.rtol:.2g}).{why}"
                 f"{diagnose(logits, targets, smoothing, ignore_index, seen_value=seen, **tols)}")
        return
    if mine.grad is None:
        fail(f"{where}: no gradient reached the logits; build the loss from them with torch ops "
             "(no .item(), .detach() or .numpy()) and return it as a tensor")
    if not torch.isfinite(mine.grad).all():
        bad = int((~torch.isfinite(mine.grad)).sum())
        fail(f"{where}: {bad} of {mine.grad.numel()} gradient entries are inf/NaN (torch's are all finite)")
    problem = mismatch(mine.grad, expected.grad, grad_tol, what="gradient entries", against="torch's")
    if problem:
        row = int((mine.grad.double() - expected.grad.double()).abs().amax(-1).argmax())
        fail(f"{where}: the gradient w.r.t. the logits should equal torch's: {problem}; row {row}: expected "
             f"{fmt(expected.grad[row, :6].tolist())}, got {fmt(mine.grad[row, :6].tolist())}.{why}"
             f"{diagnose(logits, targets, smoothing, ignore_index, seen_grad=mine.grad, **tols)}")


def grid_runs(ctx):
    def go():
        out = []
        for i, (rows, classes, smoothing) in enumerate(GRID):
            logits, targets = make_inputs(ctx, rows, classes, seed=100 + i)
            out.append((f"{rows} rows, {classes} classes, smoothing={smoothing}", logits, targets, smoothing,
                        call(ctx, logits, targets, smoothing), torch_run(logits, targets, smoothing)))
        return out

    return ctx.cached("grid", go)


def ignore_runs(ctx):
    def go():
        out = []
        for i, (rows, classes, smoothing, ignore_index, ignored) in enumerate(IGNORE_CASES):
            logits, targets = make_inputs(ctx, rows, classes, seed=200 + i, ignore_index=ignore_index,
                                          ignored=ignored)
            n_ignored = int((targets == ignore_index).sum())
            where = (f"{rows} rows ({n_ignored} with target {ignore_index}), {classes} classes, "
                     f"smoothing={smoothing}, ignore_index={ignore_index}")
            out.append((where, logits, targets, smoothing, ignore_index,
                        call(ctx, logits, targets, smoothing, ignore_index),
                        torch_run(logits, targets, smoothing, ignore_index)))
        return out

    return ctx.cached("ignore", go)


# -- the checks ------------------------------------------------------------------------------

@CHECKS.add("value-matches-torch", "Loss equals F.cross_entropy's with label_smoothing (0, 0.1, 0.5, 1; 2-1000 classes)")
def value_matches(ctx):
    for where, logits, targets, smoothing, mine, expected in grid_runs(ctx):
        compare(where, logits, targets, smoothing, mine, expected, gradient=False)


@CHECKS.add("gradient-matches-torch", "Gradient w.r.t. the logits equals torch's")
def gradient_matches(ctx):
    for where, logits, targets, smoothing, mine, expected in grid_runs(ctx):
        as_scalar(mine.value, where)
        compare(where, logits, targets, smoothing, mine, expected, gradient=True)


def expect_ignored(where, logits, targets, smoothing, index, mine: Run, expected: Run) -> None:
    """Value and gradient equal torch's, and the ignored rows get exactly no gradient."""
    compare(where, logits, targets, smoothing, mine, expected, index, gradient=False)
    compare(where, logits, targets, smoothing, mine, expected, index, gradient=True)
    ignored = (targets == index).nonzero().flatten().tolist()
    leaked = [i for i in ignored if not is_close(mine.grad[i], torch.zeros_like(mine.grad[i]), EXACT)]
    if leaked:
        fail(f"{where}: ignored row {leaked[0]} has a gradient of size "
             f"{mine.grad[leaked[0]].abs().max().item():.3g} (expected exactly 0): ignored rows must not "
             "reach the loss at all")


@CHECKS.add("ignore-index", "Rows whose target is ignore_index are left out of both terms and of the mean, for "
                            "any ignore_index (-100, -1, a class id, and C or more, which are no class ids)")
def ignore_index(ctx):
    for where, logits, targets, smoothing, index, mine, expected in ignore_runs(ctx):
        expect_ignored(where, logits, targets, smoothing, index, mine, expected)
    for i, (rows, classes, smoothing, index, ignored) in enumerate(OUT_OF_RANGE_CASES):
        # On the CPU whatever the device: on CUDA, gather with an index >= C is a device-side assert
        # that poisons the CUDA context for every later check, where the CPU raises a catchable error.
        logits, targets = make_inputs(ctx, rows, classes, seed=400 + i, ignore_index=index, ignored=ignored,
                                      device=torch.device("cpu"))
        where = (f"ignore_index={index} with {classes} classes ({rows} rows, {len(ignored)} of them with target "
                 f"{index}), smoothing={smoothing}")
        mine = attempt(ctx, partial(call, ctx, logits, targets, smoothing, index), where,
                       f"{index} is not a class id here (the classes are 0..{classes - 1}), yet F.cross_entropy "
                       "accepts it and skips those rows: replace the ignored rows' targets by a valid index "
                       "before gather or one_hot, e.g. torch.where(keep, targets, 0) (clamp(min=0) only makes "
                       "negative values safe), and mask those rows out afterwards", baseline=lambda: ignore_runs(ctx))
        expect_ignored(where, logits, targets, smoothing, index, mine, torch_run(logits, targets, smoothing, index))


@CHECKS.add("all-rows-ignored", "A batch whose rows are all ignored gives nan (0 / 0) and a finite (zero) "
                                "gradient, as F.cross_entropy does")
def all_rows_ignored(ctx):
    for i, (rows, classes, smoothing, index) in enumerate(ALL_IGNORED_CASES):
        logits, targets = make_inputs(ctx, rows, classes, seed=500 + i, ignore_index=index, ignored=range(rows))
        where = (f"every row ignored ({rows} rows of {classes} classes, every target = ignore_index = {index}), "
                 f"smoothing={smoothing}")
        mine = attempt(ctx, partial(call, ctx, logits, targets, smoothing, index), where,
                       "F.cross_entropy returns nan here (a sum of 0 over 0 kept rows) and backpropagates zeros; "
                       "an all-padding batch must not crash the training step", baseline=lambda: ignore_runs(ctx))
        expected = torch_run(logits, targets, smoothing, index)
        assert math.isnan(expected.value.item()) and not expected.grad.any(), "torch's all-ignored loss changed"
        seen = as_scalar(mine.value, where)
        if not math.isnan(seen):
            fail(f"{where}: expected nan (0 / 0, as F.cross_entropy gives), got {fmt(seen)}: dividing by "
                 "max(count, 1) or by count + a tiny epsilon, dividing by all N rows, or returning 0 for an "
                 "empty batch hides it; divide the masked sum by keep.sum() itself")
        if not (isinstance(mine.value, torch.Tensor) and mine.value.requires_grad) or mine.grad is None:
            fail(f"{where}: the loss is nan, as expected, but no gradient reached the logits: loss.backward() "
                 "on it raises, where F.cross_entropy's nan backpropagates zeros; compute it with the same "
                 "tensor ops as for any other batch, not as a constant")
        if not torch.isfinite(mine.grad).all():
            bad = int((~torch.isfinite(mine.grad)).sum())
            fail(f"{where}: {bad} of {mine.grad.numel()} gradient entries are NaN/inf, where F.cross_entropy's "
                 "gradient is exactly 0 (no row counts); the next optimizer step would turn every weight into "
                 "NaN. Multiplying by the mask (per_row * keep) makes inf * 0 = NaN out of d(sum / 0); "
                 "select with torch.where(keep, per_row, 0) or masked_fill instead")
        # torch's gradient is all zeros here; one that is finite but not zero means ignored rows reach the
        # loss, which the ignore-index check already reports (with the rows): not graded twice.


@CHECKS.add("large-logits-stable", "Finite and correct value and gradient for logits of magnitude 1e4")
def large_logits(ctx):
    for i, (rows, classes, smoothing) in enumerate(((8, 5, 0.1), (4, 50, 1.0), (6, 3, 0.0))):
        logits, targets = make_inputs(ctx, rows, classes, seed=300 + i, scale=BIG)
        where = f"{rows} rows, {classes} classes, smoothing={smoothing}, logits ~{BIG:.0e}"
        mine, expected = call(ctx, logits, targets, smoothing), torch_run(logits, targets, smoothing)
        seen, want = as_scalar(mine.value, where), as_scalar(expected.value, where)
        if not math.isfinite(seen):
            fail(f"{where}: the loss is {seen} (expected {fmt(want)}): softmax underflows to exact 0 for such logits "
                 "and log(0) = -inf; take F.log_softmax, never torch.log(F.softmax(...))")
        if mine.grad is not None and not torch.isfinite(mine.grad).all():
            bad = int((~torch.isfinite(mine.grad)).sum())
            fail(f"{where}: {bad} of {mine.grad.numel()} gradient entries are inf/NaN (loss {fmt(seen)}); "
                 "take F.log_softmax, never torch.log(F.softmax(...))")
        compare(where, logits, targets, smoothing, mine, expected, gradient=False)
        compare(where, logits, targets, smoothing, mine, expected, gradient=True)


def dtype_cause(want, got) -> str:
    if got.is_floating_point and torch.finfo(got).bits > torch.finfo(want).bits:
        return (f"something promoted it: a tensor made without a dtype (torch.full, torch.zeros, torch.ones and "
                f"torch.tensor make float32), a .float() or .double(), or a reduction with dtype={got}; computing "
                "in a wider dtype is fine, but return the loss in the logits' dtype (.to(logits.dtype))")
    return (f"part of it ran in {dtype_name(got)}: build helper tensors from the logits (torch.full_like, "
            "zeros_like) and keep the logits' dtype throughout")


@CHECKS.add("low-and-high-precision", "bfloat16, float16 and float64 logits: a loss of the logits' dtype, with "
                                      "F.cross_entropy's value and gradient on that dtype")
def low_and_high_precision(ctx):
    for dtype in DTYPES:
        name, (value_tol, grad_tol) = dtype_name(dtype), DTYPE_TOL[dtype]
        for i, (rows, classes, smoothing) in enumerate(DTYPE_CASES):
            logits, targets = make_inputs(ctx, rows, classes, seed=600 + i, dtype=dtype)
            where = f"{name} logits, {rows} rows of {classes} classes, smoothing={smoothing}"
            mine = attempt(ctx, partial(call, ctx, logits, targets, smoothing), where,
                           f"F.cross_entropy accepts {name} logits, and so must yours: build helper tensors from "
                           "the logits (torch.full_like, zeros_like) and avoid helpers that know only some dtypes",
                           baseline=partial(call, ctx, logits.float(), targets, smoothing))
            expected = torch_run(logits, targets, smoothing)
            assert torch.isfinite(expected.value), f"{where}: F.cross_entropy itself overflowed: pick smaller cases"
            out = mine.value
            if not isinstance(out, torch.Tensor):
                fail(f"{where}: expected a 0-dim {name} tensor, got {type(out).__name__}")
            as_scalar(out, where)
            if out.dtype != dtype:
                fail(f"{where}: expected a {name} loss (F.cross_entropy returns the logits' dtype), got "
                     f"{dtype_name(out.dtype)}: {dtype_cause(dtype, out.dtype)}")
            seen, want = as_scalar(out, where), as_scalar(expected.value, where)
            if not math.isfinite(seen):
                info = torch.finfo(dtype)
                fail(f"{where}: the loss is {seen} (expected {fmt(want)}): {name} has a narrow range. exp() "
                     f"underflows to 0 for a logit {-math.log(info.smallest_normal * info.eps):.0f} below its row's "
                     "maximum, so torch.log(F.softmax(...)) is -inf there: take F.log_softmax; and a sum of many "
                     f"values overflows past {info.max:.0f}: average, or sum in float32 and cast back")
            why = ""
            if dtype == torch.float64 and 1e-10 < rel_diff(seen, want) < 1e-5:
                why = (" That is the size of float32 rounding: part of the computation ran in float32 (a .float(), "
                       "or a helper tensor made without dtype=); compute in the logits' dtype.")
            tolerance = {"value_tol": value_tol, "grad_tol": grad_tol, "why": why}
            compare(where, logits, targets, smoothing, mine, expected, gradient=False, **tolerance)
            compare(where, logits, targets, smoothing, mine, expected, gradient=True, **tolerance)


@CHECKS.add("returns-scalar-tensor", "Returns a 0-dim tensor of the logits' dtype that carries the graph")
def returns_scalar(ctx):
    logits, targets = make_inputs(ctx, 4, 5, seed=7)
    out = call(ctx, logits, targets, 0.1).value
    if not isinstance(out, torch.Tensor):
        fail(f"expected a torch.Tensor, got {type(out).__name__} ({out!r}); return the loss tensor itself "
             "(no .item()) so that the caller can call .backward() on it")
    if out.dim() != 0:
        fail(f"expected a 0-dim tensor (the mean over rows), got shape {tuple(out.shape)}")
    if out.dtype != logits.dtype:
        fail(f"expected dtype {logits.dtype} for {logits.dtype} logits, got {out.dtype}")
    if not out.requires_grad:
        fail("the returned loss has requires_grad=False for logits that require grad: it is cut off from them")


@CHECKS.add("no-builtin-smoothing", "Smoothing is computed by hand, not by F.cross_entropy's label_smoothing")
def no_builtin(ctx):
    runs = grid_runs(ctx)
    calls = [(where, s) for where, *_, mine, _ in runs for s in mine.builtin]
    smoothed = [(where, s) for where, s in calls if not s == 0]  # NaN (not a number) counts too
    if smoothed:
        where, s = smoothed[0]
        fail(f"{len(smoothed)} of the {len(runs)} graded calls reached torch's cross-entropy with label_smoothing > 0 "
             f"(first: {where}, label_smoothing={s}); write the smoothing term from F.log_softmax yourself "
             "(F.cross_entropy or F.nll_loss without label_smoothing for the NLL term is fine)")
    if not any(mine.grad is not None for *_, mine, _ in runs):
        # A loss that never touched the logits used no built-in smoothing for no merit.
        nothing_to_check("no returned loss was computed from the logits (no gradient reached them)")


@CHECKS.add("validation", "ValueError for smoothing outside [0, 1]")
def validation(ctx):
    logits, targets = make_inputs(ctx, 4, 3, seed=9)
    for smoothing in BAD_SMOOTHING:
        try:
            with watch_builtin_smoothing():
                result = ctx.solution.label_smoothing_cross_entropy(logits, targets, smoothing=smoothing)
        except ValueError:
            continue
        except Exception as exc:  # noqa: BLE001 - the wrong exception is the finding
            fail(f"smoothing={smoothing}: expected ValueError, got {type(exc).__name__}: {exc}")
        shown = fmt(as_scalar(result, f"smoothing={smoothing}")) if isinstance(result, torch.Tensor) else repr(result)
        fail(f"smoothing={smoothing}: expected ValueError (smoothing must be in [0, 1]), but it returned {shown}")
