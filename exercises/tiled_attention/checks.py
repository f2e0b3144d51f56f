"""Behavioural checks for tiled_attention: call the learner's function on fresh inputs (scenarios.py),
watched from inside torch (watch.py), and compare its output and gradients with torch's
F.scaled_dot_product_attention run in float64 on the same values; a wrong output is matched against
the usual mistakes (variants.py) to say which one it is."""

from __future__ import annotations

import contextlib
import math
import traceback
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import torch
import torch.nn.functional as F

from quizapp.checking.harness import (
    EXACT,
    CheckFailed,
    Checks,
    CheckSkipped,
    ForeignSkip,
    Required,
    Tol,
    consequence,
    fail,
    largest_error,
    listed,
    mismatch,
    nothing_to_check,
    plural,
    sibling_module,
)

scn = sibling_module(__file__, "scenarios")
variants = sibling_module(__file__, "variants")
watch = sibling_module(__file__, "watch")
Case = scn.Case

# The contract's tolerances, |yours - SDPA's float64| <= rtol * |SDPA's| + atol element by element: one
# rounding of the result for the half types (bfloat16 2^-8, float16 2^-11: the unit roundoff, plus an
# atol for the float32 steps before it), a hundredfold float32's own error for float32, and for float64
# thousands of its eps yet far below float32's (a float64 input computed in float32 fails). Measured:
# the reference stays within 0.98 of the half-type bounds over 300 random cases each, and bfloat16 or
# float16 arithmetic inside exceeds them 7 times or more on every one.
TOLS = {"float64": Tol(1e-10, 1e-10), "float32": Tol(1e-5, 2e-5), "bfloat16": Tol(2 ** -8, 1e-4),
        "float16": Tol(2 ** -11, 2e-5)}
GRAD_TOLS = {"float64": Tol(1e-9, 1e-9), "float32": Tol(1e-4, 1e-4)}
# Scores of 1e4: the checked ones are exact in float32 (integer entries, 1/sqrt(D) a power of 2), yet a
# float32 score of 1e4 in general carries a rounding of about 1e-3: the contract's float32 bound.
LARGE_TOLS = {"float64": TOLS["float64"], "float32": Tol(atol=1e-2)}

C = partial(Case, causal=True)
# Not causal, float32, Nk a multiple of block_size: the online softmax itself.
MATCHES = [Case(2, 3, 10, 16, 8, 8, 1, seed=1), Case(1, 2, 7, 24, 8, 5, 2, qk_std=3, seed=2),
           Case(2, 2, 12, 32, 16, 16, 4, seed=3), Case(1, 1, 1, 40, 8, 8, 5, qk_std=3, seed=4),
           Case(2, 2, 9, 48, 8, 12, 8, seed=5), Case(1, 3, 16, 64, 16, 8, 16, qk_std=3, seed=6),
           Case(2, 1, 5, 64, 4, 4, 32, seed=7), Case(1, 2, 33, 128, 8, 8, 64, seed=8)]
# Nk not a multiple of block_size, and Nk < block_size.
RAGGED = [Case(1, 2, 9, 37, 8, 6, 8, seed=12), Case(2, 2, 6, 10, 8, 8, 64, seed=11),
          Case(2, 1, 4, 13, 4, 4, 5, qk_std=3, seed=13), Case(1, 1, 1, 7, 8, 8, 2, seed=14),
          Case(1, 2, 11, 50, 16, 16, 16, seed=15), Case(2, 2, 8, 33, 8, 8, 32, seed=16)]
# Causal with one key block (block_size = Nk): the mask's alignment alone.
CAUSAL_ONE_BLOCK = [C(1, 2, 6, 8, 8, 8, 8, seed=21), C(2, 1, 12, 4, 8, 6, 4, seed=22), C(1, 2, 8, 8, 8, 8, 8, seed=23),
                    C(1, 1, 1, 8, 4, 4, 8, seed=24), C(2, 2, 3, 16, 8, 8, 16, seed=25)]
# Causal over many key blocks, some wholly above the diagonal for some (or all) query rows.
CAUSAL_TILED = [C(2, 2, 16, 16, 8, 8, 4, seed=31), C(1, 2, 8, 40, 8, 8, 8, seed=32), C(1, 1, 20, 12, 8, 8, 4, seed=33),
                C(2, 1, 1, 8, 4, 4, 2, seed=34), C(1, 2, 24, 24, 8, 8, 1, seed=35), C(1, 2, 23, 21, 8, 6, 5, seed=36)]
# The dtypes, the layouts and the range: not causal, Nk a multiple of block_size (the checks above judge
# the mask and the last block; a mistake there is not reported again here).
PRECISION = [Case(2, 2, 10, 32, 8, 6, 8, dtype="bfloat16", qk_std=3, seed=41),
             Case(1, 2, 16, 16, 8, 8, 4, dtype="bfloat16", seed=42),
             Case(2, 2, 10, 32, 8, 6, 8, dtype="float16", seed=43),
             Case(1, 2, 16, 16, 8, 8, 4, dtype="float16", qk_std=3, seed=44),
             Case(2, 2, 9, 20, 8, 6, 4, dtype="float64", seed=45), Case(1, 2, 12, 8, 8, 8, 2, dtype="float64", seed=46)]
LARGE = [Case(1, 2, 8, 24, 16, 8, 8, large="mixed", seed=51), Case(1, 2, 8, 24, 16, 8, 8, large="negative", seed=52),
         Case(2, 1, 6, 32, 16, 8, 16, large="mixed", dtype="float64", seed=53),
         Case(2, 1, 6, 32, 16, 8, 16, large="negative", dtype="float64", seed=54)]
STRIDES = [Case(2, 3, 10, 24, 8, 8, 8, layout="transposed", seed=61), Case(1, 2, 9, 20, 8, 6, 4, layout="transposed", seed=62),
           Case(2, 2, 7, 20, 8, 8, 5, layout="strided", seed=63), Case(2, 4, 6, 16, 8, 8, 4, layout="expanded", seed=64)]
GRADIENTS = [Case(2, 2, 9, 20, 8, 6, 4, dtype="float64", seed=71), C(1, 2, 12, 12, 8, 8, 5, dtype="float64", seed=72),
             C(1, 1, 6, 17, 4, 4, 8, dtype="float64", seed=73), Case(2, 1, 10, 24, 8, 8, 8, qk_std=3, seed=74),
             C(1, 2, 16, 9, 8, 6, 4, seed=75)]
MEMORY = [Case(2, 2, 64, 512, 8, 8, 16, causal=causal, qk_std=1, seed=81 + i) for i, causal in enumerate((False, True))]
MEMORY += [Case(2, 2, 256, 256, 16, 16, 32, causal=causal, qk_std=1, seed=83 + i) for i, causal in enumerate((False, True))]
MEMORY += [Case(1, 2, 512, 64, 8, 8, 16, causal=causal, qk_std=1, seed=85 + i) for i, causal in enumerate((False, True))]
UNTOUCHED = [Case(2, 2, 8, 20, 8, 8, 4, seed=91), C(1, 2, 10, 12, 8, 6, 4, dtype="float64", layout="transposed", seed=92),
             Case(2, 1, 6, 9, 8, 8, 4, dtype="bfloat16", seed=93), Case(1, 2, 5, 16, 8, 8, 8, layout="strided", seed=94)]
BAD_BLOCKS = (0, -1, -64)

CHECKS = Checks(Required("tiled_attention", "(q, k, v, *, block_size=64, causal=False) -> torch.Tensor",
                         sample_args=(None, None, None), sample_kwargs={"block_size": 64, "causal": False}))


# -- calls ---------------------------------------------------------------------------------------

@dataclass
class Run:
    out: object
    record: object  # watch.Record
    inputs: tuple  # q, k, v as the call left them


def call(ctx, c, inputs=None) -> Run:
    q, k, v = scn.make(c, ctx.device) if inputs is None else inputs
    with ctx.given(scn.describe(c)), watch.watching(q, k, v) as record:
        out = ctx.solution.tiled_attention(q, k, v, block_size=c.block, causal=c.causal)
    return Run(out, record, (q, k, v))


def runs(ctx, key: str, cases) -> list[tuple]:
    return ctx.cached(key, lambda: [(c, call(ctx, c)) for c in cases])


def fails(ctx, check) -> bool:
    """Whether another check fails (or stops on an error): a later failure may follow from it."""

    def go():
        try:
            check(ctx)
        except CheckSkipped:
            return False
        except Exception:  # noqa: BLE001 - a failure or an error: either way the cause may lie there
            return True
        return False

    return ctx.cached(("fails", check.__name__), go)


@contextlib.contextmanager
def follows(ctx, *upstream):
    """Point a failure at the earlier checks that fail too."""
    try:
        yield
    except CheckFailed as exc:
        titles = [next(x.title for x in CHECKS.checks if x.run is check) for check in upstream if fails(ctx, check)]
        if titles:
            raise CheckFailed(f"{exc}; {'; '.join(consequence(t) for t in titles)}") from None
        raise


def upstream_of(c, *more) -> list:
    """The earlier checks whose subject case `c` shares: the online softmax always, the last block when Nk
    is not a multiple of block_size, the mask when causal."""
    found = [matches_sdpa] + ([last_block] if c.nk % c.block else [])
    return found + ([causal_top_left, causal_tiled] if c.causal else []) + list(more)


def shape_problem(c, out) -> str | None:
    want = (c.b, c.h, c.nq, c.dv)
    if not isinstance(out, torch.Tensor):
        return f"expected a tensor of shape {want} = (B, H, Nq, Dv), got {type(out).__name__}"
    if tuple(out.shape) != want:
        hint = " (D where Dv was due: the output takes v's width)" if tuple(out.shape) == (*want[:3], c.d) else ""
        return f"expected an output of shape {want} = (B, H, Nq, Dv), got {tuple(out.shape)}{hint}"
    return None


def judge_output(c, out, tol: Tol) -> None:
    where = scn.describe(c)
    problem = shape_problem(c, out)
    if problem:
        fail(f"{where}: {problem}")
    if out.dtype != scn.DTYPES[c.dtype]:
        fail(f"{where}: expected a {c.dtype} output (the inputs' dtype), got {str(out.dtype).removeprefix('torch.')}"
             f": {dtype_cause(c)}")
    want = variants.exact(c)
    problem = mismatch(out, want, tol, what="outputs", against="SDPA's")
    if problem:
        fail(f"{where}: {problem}{variants.output_cause(c, out, want)}")


def dtype_cause(c) -> str:
    if c.dtype == "float64":
        return "float64 inputs are computed in float64 and returned as float64"
    return "compute in float32, then round the result once, at the end (.to(q.dtype))"


# -- the online softmax ----------------------------------------------------------------------------

@CHECKS.add("matches-sdpa", "The output equals F.scaled_dot_product_attention's (float32, not causal; block sizes "
            "1 to 64 dividing Nk; Nq = 1; B and H above 1; Dv != D)")
def matches_sdpa(ctx):
    for c, run in runs(ctx, "matches", MATCHES):
        judge_output(c, run.out, TOLS[c.dtype])


@CHECKS.add("last-block", "Nk not a multiple of block_size, and Nk < block_size: the shorter last block counts")
def last_block(ctx):
    with follows(ctx, matches_sdpa):
        for c, run in runs(ctx, "ragged", RAGGED):
            judge_output(c, run.out, TOLS[c.dtype])


# -- causal ------------------------------------------------------------------------------------------

@CHECKS.add("causal-top-left", "causal=True is SDPA's is_causal: query i sees keys j <= i (top-left), for Nq < Nk, "
            "Nq = Nk and Nq > Nk (one key block)")
def causal_top_left(ctx):
    with follows(ctx, matches_sdpa):
        for c, run in runs(ctx, "causal-one", CAUSAL_ONE_BLOCK):
            judge_output(c, run.out, TOLS[c.dtype])


@CHECKS.add("causal-tiled", "Causal over many key blocks, some wholly above the diagonal: SDPA's output, with no "
            "NaN from exp(-inf - (-inf))")
def causal_tiled(ctx):
    for c, run in runs(ctx, "causal-tiled", CAUSAL_TILED):
        with follows(ctx, *upstream_of(c)[:-1]):  # all but this check itself
            judge_output(c, run.out, TOLS[c.dtype])


# -- precision and range -----------------------------------------------------------------------------

@CHECKS.add("precision", "bfloat16, float16 and float64 inputs: an output of that dtype within one rounding of the "
            "exact result (float32 arithmetic inside, float64 for float64)")
def precision(ctx):
    with follows(ctx, matches_sdpa):
        for c, run in runs(ctx, "precision", PRECISION):
            try:
                judge_output(c, run.out, TOLS[c.dtype])
            except CheckFailed as exc:
                raise CheckFailed(f"{exc}{precision_cause(ctx, c, run.out)}") from None


def precision_cause(ctx, c, out) -> str:
    """Errors of a few roundings, at the scale of the largest output, with a right float32 path: arithmetic in
    too narrow a dtype."""
    if shape_problem(c, out) or out.dtype != scn.DTYPES[c.dtype] or fails(ctx, matches_sdpa):
        return ""
    want = variants.exact(c)
    seen = out.detach().to("cpu", torch.float64)
    error = largest_error(seen, want)  # of the largest |output|
    if c.dtype == "float64":
        if error < 1e-4:
            return (f". An error of {error:.2g} of the largest output is the size of float32's rounding: part of "
                    "the computation ran in float32; float64 inputs are computed in float64")
        return ""
    unit = TOLS[c.dtype].rtol
    if not math.isfinite(error) or error > 0.1:
        return ""
    return (f". The largest error is {error / unit:.3g} times {c.dtype}'s unit roundoff 2^{round(math.log2(unit))} "
            f"of the largest |output|, where one rounding of the exact result moves each output by at most "
            f"2^{round(math.log2(unit))} of itself: {c.dtype} arithmetic inside "
            "(scores, exponentials, sums or P @ V) rounds at every step; upcast q, k, v to float32, compute there, "
            "and round only the result")


@CHECKS.add("large-scores", "Scores of magnitude 1e4 (of both signs, and all near -1e4): a finite output, equal to "
            "SDPA's (float64 within 1e-10, float32 within 1e-2)")
def large_scores(ctx):
    for c, run in runs(ctx, "large", LARGE):
        with follows(ctx, *upstream_of(c, *([precision] if c.dtype != "float32" else []))):
            out = run.out
            if isinstance(out, torch.Tensor) and not shape_problem(c, out) and not bool(out.isfinite().all()):
                bad = int((~out.isfinite()).sum())
                fail(f"{scn.describe(c)}: {bad} of {out.numel()} outputs are NaN or infinite (SDPA's are all "
                     f"finite){large_cause(c)}")
            judge_output(c, out, LARGE_TOLS[c.dtype])


def large_cause(c) -> str:
    if c.large == "negative":
        return ("; every score here is near -1e4, and exp(s - m) underflows to 0 for every key unless m, the value "
                "subtracted, is the running max itself: a running max that starts at 0 (or no max subtracted at "
                "all) leaves the running sum at 0, and the final division is 0/0. Start the running max at -inf and subtract it")
    return ("; exp of a score of 1e4 overflows (exp(89) is already inf in float32): subtract the running max before "
            "exp, so that every exponent is at most 0")


# -- layouts ---------------------------------------------------------------------------------------

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


@CHECKS.add("any-strides", "Transposed, strided and expanded (stride 0) q, k, v give SDPA's output")
def any_strides(ctx):
    with follows(ctx, matches_sdpa):
        for c in STRIDES:
            try:
                run = call(ctx, c)
            except (CheckFailed, CheckSkipped, ForeignSkip):
                raise
            except Exception as exc:  # noqa: BLE001 - the crash on these strides is the finding
                call(ctx, c.but(layout="contiguous"))  # raises too: an error of every layout, reported as it is
                fail(f"{scn.describe(c)}: your function raised {raised(ctx, exc)}, though the same values in "
                     "contiguous tensors go through: q, k, v may have any strides. .view() needs strides that "
                     "fit the new shape; use .reshape(), or index the (B, H, N, D) dimensions as they are")
            judge_output(c, run.out, TOLS[c.dtype])


# -- gradients -------------------------------------------------------------------------------------

def weights_of(c) -> torch.Tensor:
    g = torch.Generator().manual_seed(5000 + c.seed)
    return torch.randn(c.b, c.h, c.nq, c.dv, generator=g, dtype=torch.float64)


def expected_grads(c) -> list[torch.Tensor]:
    leaves = [t.clone().requires_grad_(True) for t in scn.exact_inputs(c)]
    (F.scaled_dot_product_attention(*leaves, is_causal=c.causal) * weights_of(c)).sum().backward()
    return [t.grad for t in leaves]


def gradient_run(ctx, c):
    """Leaves q0, k0, v0; the solution gets q0.clone() and so on, tensors inside a graph as a model's
    projections are; then (out * w).sum().backward() with a fixed random w."""
    leaves = [t.detach().requires_grad_(True) for t in scn.make(c, ctx.device)]
    run = call(ctx, c, tuple(t.clone() for t in leaves))
    out = run.out
    if isinstance(out, torch.Tensor) and not shape_problem(c, out) and out.requires_grad:
        with ctx.given(f"{scn.describe(c)}: the backward of (out * w).sum()"):
            (out * weights_of(c).to(out.device, out.dtype)).sum().backward()
    return out, [t.grad for t in leaves]


@CHECKS.add("gradients", "q.grad, k.grad, v.grad through autograd equal SDPA's (float64 within 1e-9, float32 within "
            "1e-4; causal and not)")
def gradients(ctx):
    for c in GRADIENTS:
        with follows(ctx, *upstream_of(c, *([precision] if c.dtype != "float32" else []))):
            out, grads = ctx.cached(("grad", c), partial(gradient_run, ctx, c))
            where = f"{scn.describe(c)}, gradients of (out * w).sum()"
            problem = shape_problem(c, out)
            if problem:
                fail(f"{where}: {problem}")
            if not out.requires_grad:
                fail(f"{where}: the output does not require grad, though q, k and v do: it is cut off from them "
                     "(torch.no_grad(), .detach(), .data, or values copied into a tensor made without a graph); "
                     "build it from q, k, v with differentiable torch ops")
            for name, grad, want in zip("qkv", grads, expected_grads(c)):
                if grad is None:
                    fail(f"{where}: {name}.grad is None after backward(): the output does not depend on {name} "
                         "through autograd")
                problem = mismatch(grad, want, GRAD_TOLS[c.dtype], what=f"{name}.grad entries", against="SDPA's")
                if problem:
                    fail(f"{where}: {name}.grad: {problem}")


# -- what the call does ------------------------------------------------------------------------------

def memory_runs(ctx) -> list[tuple]:
    ran = runs(ctx, "memory", MEMORY)
    if not any("k" in run.record.read for _, run in ran):
        nothing_to_check("no op read k in any call: no attention was computed")
    return ran


def memory_cause(c, shape: tuple) -> str:
    last = tuple(shape[-2:])
    if last == (c.nq, c.nk):
        return (f": a full Nq x Nk = {c.nq} x {c.nk} {'mask' if len(shape) == 2 else 'score matrix'}; keep one "
                f"(Nq x block_size) = {c.nq} x {c.block} tile at a time" + (", and build the causal mask per key "
                                                                             "block" if len(shape) == 2 else ""))
    if len(last) == 2 and last[1] == c.nk and last[0] < c.nq:
        return (f": a block of {last[0]} queries against all {c.nk} keys at once, chunked attention with an exact "
                f"softmax over whole rows; visit the keys in blocks of block_size too, with the online softmax")
    return ""


@CHECKS.add("memory-bound", "While the call runs, no op returns more than B·H·max(Nq·block_size, (max(Nq, Nk) + "
            "block_size)·max(D, Dv)) elements: no full score matrix or mask, no queries against all keys at once")
def memory_bound(ctx):
    for c, run in memory_runs(ctx):
        bound, rec = scn.memory_bound(c), run.record
        if rec.largest > bound:
            fail(f"{scn.describe(c)}: {rec.largest_op} returned a tensor of shape {rec.largest_shape}, "
                 f"{rec.largest} elements; the bound is {bound} (one {c.nq} x {c.block} score tile per (B, H), and "
                 f"room for copies of q, k, v and the output){memory_cause(c, rec.largest_shape)}")


@CHECKS.add("no-attention-kernel", "No torch attention kernel runs (no op named scaled_dot_product, flash_attention "
            "or efficient_attention)")
def no_attention_kernel(ctx):
    ran = runs(ctx, "matches", MATCHES) + memory_runs(ctx)
    used = [(c, run.record.kernels) for c, run in ran if run.record.kernels]
    if used:
        c, names = used[0]
        counts = [f"{name} ({plural(names.count(name), 'time')})" for name in dict.fromkeys(names)]
        fail(f"{len(used)} of {len(ran)} calls ran torch's attention kernels (first: {scn.describe(c)}: "
             f"{listed(counts)}); write the online softmax yourself, with matmuls, max and exp over key blocks")


@CHECKS.add("inputs-untouched", "q, k and v are left as they were: same values, shape and strides")
def inputs_untouched(ctx):
    ran = runs(ctx, "untouched", UNTOUCHED)
    if not any(run.record.read for _, run in ran):
        nothing_to_check("no op read q, k or v in any call")
    for c, run in ran:
        for name, now, was in zip("qkv", run.inputs, scn.make(c, "cpu")):
            where = f"{scn.describe(c)}: {name}"
            if tuple(now.shape) != tuple(was.shape) or now.stride() != was.stride():
                fail(f"{where} now has shape {tuple(now.shape)} and strides {now.stride()}; it was given with shape "
                     f"{tuple(was.shape)} and strides {was.stride()}: an in-place view op (transpose_, "
                     "unsqueeze_, resize_) changed the caller's tensor")
            problem = mismatch(now, was, EXACT, what="entries", against="the values given", yours="now")
            if problem:
                fail(f"{where} changed during the call: {problem}{untouched_cause(c, now, was)}")


def untouched_cause(c, now, was) -> str:
    now, was = now.detach().to("cpu", torch.float64), was.double()
    ratio = now[was != 0] / was[was != 0]
    if ratio.numel() and float(ratio.max() - ratio.min()) < 1e-6 * float(ratio.abs().max()):
        factor = float(ratio[0])
        named = " = 1/sqrt(D)" if abs(factor - 1 / math.sqrt(c.d)) < 1e-6 else ""
        return (f"; every entry was multiplied by {factor:.4g}{named}: the scale was applied in place (q *= scale, "
                f"q.mul_()). .to({c.dtype}) or .float() of a tensor already of that dtype returns that same tensor, "
                "not a copy; multiply out of place (q * scale) or scale the scores")
    return "; an in-place op wrote into the caller's tensor: work on copies or write out of place"


@CHECKS.add("rejects-bad-block-size", "ValueError for block_size 0, -1 and -64")
def rejects_bad_block_size(ctx):
    c = Case(1, 2, 4, 8, 8, 8, 4, seed=99)
    for block in BAD_BLOCKS:
        q, k, v = scn.make(c, ctx.device)
        where = f"block_size={block} ({scn.shape_text(c)})"
        try:
            out = ctx.solution.tiled_attention(q, k, v, block_size=block, causal=False)
        except ValueError:
            continue
        except Exception as exc:  # noqa: BLE001 - the wrong exception is the finding
            note = (" (an assert raises AssertionError, and is skipped under python -O)"
                    if isinstance(exc, AssertionError) else "")
            fail(f"{where}: expected ValueError, got {raised(ctx, exc)}{note}")
        shown = f"a tensor of shape {tuple(out.shape)}" if isinstance(out, torch.Tensor) else repr(out)[:80]
        fail(f"{where}: expected ValueError (block_size must be at least 1), but it returned {shown}"
             + (": range(0, Nk, block_size) runs no block for a negative step" if block < 0 else ""))
