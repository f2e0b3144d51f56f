"""Behavioural checks for label_smoothing: call the learner's loss and torch's built-in
`F.cross_entropy(..., label_smoothing=...)` on identical logits and compare values and gradients;
watch torch's cross-entropy kernel to see whether the built-in smoothing did the work."""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from quizapp.grading.harness import Checks, Required, fail, fmt, rel_diff

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
BIG = 1e4
# Same formula in another op order differs by ~1e-7 in float32; the smallest bug (C - 1 instead
# of C) moves the value by more than 1e-3 of it.
VALUE_RTOL, VALUE_ATOL = 1e-5, 1e-6
GRAD_RTOL = 1e-4  # of the largest gradient entry
BAD_SMOOTHING = (-0.1, 1.5, 2.0)

CHECKS = Checks(
    Required("label_smoothing_cross_entropy",
             "(logits, targets, *, smoothing=0.1, ignore_index=-100) -> torch.Tensor",
             sample_args=(None, None), sample_kwargs={"smoothing": 0.1, "ignore_index": -100}),
)


# -- watching torch's cross-entropy ------------------------------------------------------------

_BUILTIN_SMOOTHING: list[float] = []


@contextlib.contextmanager
def watch_builtin_smoothing():
    """Record the label_smoothing every cross-entropy call passes to torch's kernel. F.cross_entropy
    and nn.CrossEntropyLoss both reach torch._C._nn.cross_entropy_loss, looked up at call time, so
    this sees the call however the solution imported them."""
    real = torch._C._nn.cross_entropy_loss

    def recording(*args, **kwargs):
        smoothing = args[5] if len(args) > 5 else kwargs.get("label_smoothing", 0.0)
        _BUILTIN_SMOOTHING.append(float(smoothing))
        return real(*args, **kwargs)

    torch._C._nn.cross_entropy_loss = recording
    try:
        yield
    finally:
        torch._C._nn.cross_entropy_loss = real


# -- runs ------------------------------------------------------------------------------------

def make_inputs(ctx, rows, classes, seed, scale=3.0, ignore_index=-100, ignored=()):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(rows, classes, generator=g) * scale
    targets = torch.randint(0, classes, (rows,), generator=g)
    for i in ignored:
        targets[i] = ignore_index
    return logits.to(ctx.device), targets.to(ctx.device)


@dataclass
class Run:
    value: object
    grad: torch.Tensor | None
    builtin: list = field(default_factory=list)  # label_smoothing values passed to torch's kernel


def call(ctx, logits, targets, smoothing, ignore_index=-100) -> Run:
    x = logits.clone().requires_grad_(True)
    size = f", logits ~{BIG:.0e}" if logits.abs().max().item() >= BIG / 10 else ""
    ignore = f", ignore_index={ignore_index}" if ignore_index != -100 else ""
    start = len(_BUILTIN_SMOOTHING)
    with ctx.given(f"{len(x)} rows of {x.shape[1]} classes, smoothing={smoothing}{ignore}{size}"), \
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


def as_scalar(value, where: str) -> float:
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            fail(f"{where}: expected a scalar loss (the mean over rows), got a tensor of shape {tuple(value.shape)}")
        return value.detach().double().item()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    fail(f"{where}: expected a 0-dim tensor, got {type(value).__name__}")


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


def diagnose(logits, targets, smoothing, ignore_index=-100, *, seen_value=None, seen_grad=None) -> str:
    for why in variants(logits, targets, smoothing, ignore_index):
        x = logits.clone().requires_grad_(True)
        v = variants(x, targets, smoothing, ignore_index)[why]
        if smoothing == 0 and "smoothing" in why and "ignored" not in why:
            continue  # these variants coincide with the right answer when smoothing is 0
        if seen_grad is not None:
            v.backward()
            if (x.grad - seen_grad).abs().max().item() <= GRAD_RTOL * max(x.grad.abs().max().item(), 1e-12):
                return f" Your gradient matches a loss where {why}."
        elif seen_value is not None and abs(v.item() - seen_value) <= VALUE_RTOL * abs(v.item()) + VALUE_ATOL:
            return f" Your value matches a loss where {why}."
    return ""


def compare(where, logits, targets, smoothing, mine: Run, expected: Run, ignore_index=-100, *,
            gradient: bool) -> None:
    seen, want = as_scalar(mine.value, where), as_scalar(expected.value, where)
    if not gradient:
        if not (math.isfinite(seen) and abs(seen - want) <= VALUE_RTOL * abs(want) + VALUE_ATOL):
            fail(f"{where}: expected loss {fmt(want)} (F.cross_entropy with label_smoothing={smoothing}), got "
                 f"{fmt(seen)} (relative difference {rel_diff(seen, want):.2e}, tolerance {VALUE_RTOL:.0e})."
                 f"{diagnose(logits, targets, smoothing, ignore_index, seen_value=seen)}")
        return
    if mine.grad is None:
        fail(f"{where}: no gradient reached the logits; build the loss from them with torch ops "
             "(no .item(), .detach() or .numpy()) and return it as a tensor")
    size = expected.grad.abs().max().item()
    diff = (mine.grad - expected.grad).abs().max().item()
    if not diff <= GRAD_RTOL * size:
        row = int((mine.grad - expected.grad).abs().amax(-1).argmax())
        fail(f"{where}: the gradient w.r.t. the logits differs from torch's by up to {diff:.3g} (largest entry "
             f"{size:.3g}; tolerance {GRAD_RTOL * size:.2g}); row {row}: expected "
             f"{fmt(expected.grad[row, :6].tolist())}, got {fmt(mine.grad[row, :6].tolist())}."
             f"{diagnose(logits, targets, smoothing, ignore_index, seen_grad=mine.grad)}")


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


@CHECKS.add("ignore-index", "Rows whose target is ignore_index are left out of both terms and of the mean")
def ignore_index(ctx):
    for where, logits, targets, smoothing, index, mine, expected in ignore_runs(ctx):
        compare(where, logits, targets, smoothing, mine, expected, index, gradient=False)
        compare(where, logits, targets, smoothing, mine, expected, index, gradient=True)
        ignored = (targets == index).nonzero().flatten().tolist()
        leaked = [i for i in ignored if mine.grad[i].abs().max().item() > 0]
        if leaked:
            fail(f"{where}: ignored row {leaked[0]} has a gradient of size "
                 f"{mine.grad[leaked[0]].abs().max().item():.3g} (expected exactly 0): ignored rows must not "
                 "reach the loss at all")


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
    smoothed = [(where, s) for where, s in calls if s > 0]
    if smoothed:
        where, s = smoothed[0]
        fail(f"{len(smoothed)} of the {len(runs)} graded calls reached torch's cross-entropy with label_smoothing > 0 "
             f"(first: {where}, label_smoothing={s}); write the smoothing term from F.log_softmax yourself "
             "(F.cross_entropy or F.nll_loss without label_smoothing for the NLL term is fine)")


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
