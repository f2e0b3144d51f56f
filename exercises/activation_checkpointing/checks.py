"""Behavioural checks for activation_checkpointing: run the learner's forward and a plain one on
identical blocks (dropout on) from the same RNG state, compare outputs and gradients, and watch
the checkpoint regions, the recomputation in backward and the activations autograd keeps."""

from __future__ import annotations

from dataclasses import dataclass

import torch

# checkpoint() imports torch._dynamo on its first call (it is wrapped in _disable_dynamo): once here,
# so the warm grader's zygote pays it, not every forked grade.
import torch._dynamo  # noqa: F401

from quizapp.checking.harness import Checks, Required, Tol, fail, fmt, happened, mismatch, sibling_module

watching = sibling_module(__file__, "watch")

WIDTH, BATCH, DROPOUT = 32, 16, 0.1
# (blocks, segments, x requires grad): even and uneven splits, both ends, and an input without
# grad (the usual case for a model's first layer, where the reentrant variant loses gradients).
CASES = [(6, 2, True), (7, 3, False), (6, 6, True), (6, 1, False), (8, 3, True)]
MEMORY_BLOCKS = 6
# Recomputation on the same device repeats the same float ops: equal up to rounding, of each
# tensor's largest entry (an entry near zero holds no more digits than its neighbours).
TOL = Tol(rtol=1e-5, of_largest=True)
MEMORY_SLACK = 1.10

CHECKS = Checks(
    Required("checkpointed_forward", "(blocks, x, *, segments) -> torch.Tensor",
             sample_args=(None, None), sample_kwargs={"segments": 1}),
)


class Block(torch.nn.Module):
    """A transformer-MLP-like block with dropout, so the RNG state matters on recomputation."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(WIDTH, WIDTH)
        self.drop = torch.nn.Dropout(DROPOUT)

    def forward(self, x):
        return self.drop(torch.nn.functional.gelu(self.linear(x)))


def build(ctx, n_blocks, seed=0):
    torch.manual_seed(seed)
    blocks = torch.nn.ModuleList(Block() for _ in range(n_blocks)).to(ctx.device).train()
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(BATCH, WIDTH, generator=g).to(ctx.device)
    weight = torch.randn(BATCH, WIDTH, generator=g).to(ctx.device)  # loss = (out * weight).sum()
    return blocks, x, weight


def expected_boundaries(n_blocks, segments) -> list[list[int]]:
    base, extra = divmod(n_blocks, segments)
    out, start = [], 0
    for i in range(segments):
        length = base + (1 if i < extra else 0)
        out.append(list(range(start, start + length)))
        start += length
    return out


def runs(bounds) -> str:
    return " + ".join(f"blocks {b[0]}-{b[-1]}" if len(b) > 1 else f"block {b[0]}" for b in bounds) or "none"


@dataclass
class Observed:
    output: torch.Tensor | None
    x_grad: torch.Tensor | None
    grads: dict  # parameter name -> grad (None when no gradient reached it)
    watch: object


def plain(ctx, n_blocks, x_requires_grad, seed=0) -> Observed:
    def go():
        blocks, x, weight = build(ctx, n_blocks, seed)
        x.requires_grad_(x_requires_grad)
        watch = watching.Watch()
        torch.manual_seed(seed + 7)
        with watching.kept_activations(watch, list(blocks.parameters())):
            out = x
            for block in blocks:
                out = block(out)
        (out * weight).sum().backward()
        return Observed(out.detach(), x.grad, {n: p.grad for n, p in blocks.named_parameters()}, watch)

    return ctx.cached(("plain", n_blocks, x_requires_grad, seed), go)


def observe(ctx, impl, n_blocks, segments, x_requires_grad, seed=0, *, backward=True) -> Observed:
    def go():
        blocks, x, weight = build(ctx, n_blocks, seed)
        x.requires_grad_(x_requires_grad)
        watch = watching.Watch()
        torch.manual_seed(seed + 7)  # the same RNG state as the plain run: the same dropout masks
        grad = "" if x_requires_grad else ", x without grad"
        with ctx.given(f"{n_blocks} blocks, segments={segments}{grad}"):
            with watching.checkpoint_regions(watch), watching.block_hooks(watch, blocks), \
                    watching.kept_activations(watch, list(blocks.parameters())):
                out = impl.checkpointed_forward(blocks, x, segments=segments)
            if not isinstance(out, torch.Tensor):
                fail(f"{n_blocks} blocks, segments={segments}: expected a tensor, got {type(out).__name__}")
            if backward and out.requires_grad:
                watch.in_backward = True
                with watching.block_hooks(watch, blocks):
                    (out * weight).sum().backward()
        return Observed(out.detach(), x.grad, {n: p.grad for n, p in blocks.named_parameters()}, watch)

    name = "solution" if impl is ctx.solution else "reference"
    return ctx.cached((name, n_blocks, segments, x_requires_grad, seed, backward), go)


@CHECKS.add("output-and-gradients", "Output and gradients equal the plain forward's (dropout on, same RNG state)")
def output_and_gradients(ctx):
    for n_blocks, segments, x_grad in CASES:
        where = f"{n_blocks} blocks, segments={segments}" + ("" if x_grad else ", x without grad")
        want, mine = plain(ctx, n_blocks, x_grad), observe(ctx, ctx.solution, n_blocks, segments, x_grad)
        if mine.output.shape != want.output.shape:
            fail(f"{where}: expected an output of shape {tuple(want.output.shape)}, got {tuple(mine.output.shape)}")
        problem = mismatch(mine.output, want.output, TOL, what="outputs", against="the plain forward")
        if problem:
            fail(f"{where}: the output should equal the plain forward's: {problem}; every block must run once, in "
                 "order, on the previous block's output")
        missing = [n for n, g in mine.grads.items() if g is None]
        if missing:
            reentrant = any(r.reentrant for r in mine.watch.regions)
            why = (" With use_reentrant=True and an input that does not require grad, the checkpoint's output does "
                   "not require grad either, so the parameters inside get none: use use_reentrant=False."
                   if reentrant and not x_grad else "")
            fail(f"{where}: {len(missing)} of {len(mine.grads)} parameters got no gradient (first: {missing[0]}); "
                 f"the plain forward gives all of them one.{why}")
        for name, g in mine.grads.items():
            problem = mismatch(g, want.grads[name], TOL, what="entries", against="the plain forward")
            if problem:
                fail(f"{where}: the gradient of {name} should equal the plain forward's: {problem}; the output "
                     "matches, so the recomputation in backward used other dropout masks; keep checkpoint's "
                     "preserve_rng_state=True (the default)")
        if x_grad:
            problem = "it is None" if mine.x_grad is None else mismatch(mine.x_grad, want.x_grad, TOL, what="entries",
                                                                        against="the plain forward")
            if problem:
                fail(f"{where}: the gradient of x should equal the plain forward's: {problem}")


@CHECKS.add("segment-boundaries", "Exactly `segments` checkpoint regions, with the pinned boundaries (7 into 3: 3+2+2)")
def segment_boundaries(ctx):
    for n_blocks, segments, x_grad in CASES:
        w = observe(ctx, ctx.solution, n_blocks, segments, x_grad).watch
        expected, seen = expected_boundaries(n_blocks, segments), w.boundaries()
        where = f"{n_blocks} blocks, segments={segments}"
        if not w.regions:
            fail(f"{where}: no torch.utils.checkpoint.checkpoint call was seen; expected {segments} regions "
                 f"({runs(expected)})")
        if w.outside:
            fail(f"{where}: blocks {fmt(sorted(set(w.outside)))} ran outside any checkpoint region (expected "
                 f"{runs(expected)}, saw {runs(seen)}); their activations are all kept")
        if seen != expected:
            fail(f"{where}: expected {len(expected)} regions ({runs(expected)}), saw {len(seen)} ({runs(seen)}); the "
                 "first len(blocks) % segments runs are one block longer")


@CHECKS.add("use-reentrant-false", "Every checkpoint call passes use_reentrant=False")
def use_reentrant(ctx):
    # A case without any checkpoint call is the boundaries check's finding; this one needs a call.
    seen = [(n_blocks, segments, observe(ctx, ctx.solution, n_blocks, segments, x_grad).watch.regions)
            for n_blocks, segments, x_grad in CASES]
    if not any(regions for *_, regions in seen):
        fail(f"no torch.utils.checkpoint.checkpoint call was seen in {len(seen)} runs; checkpoint each run of blocks "
             "with use_reentrant=False")
    for n_blocks, segments, regions in seen:
        reentrant = [r for r in regions if r.reentrant]
        if reentrant:
            fail(f"{n_blocks} blocks, segments={segments}: {len(reentrant)} of {len(regions)} checkpoint calls took "
                 "the reentrant path (use_reentrant=True, or left out, which still means True and warns); pass "
                 "use_reentrant=False: it handles inputs without grad, keyword arguments and nesting")


def memory_curves(ctx):
    def go():
        n = MEMORY_BLOCKS
        mine = [observe(ctx, ctx.solution, n, k, False, seed=3, backward=False).watch.kept_bytes for k in range(1, n + 1)]
        ref = [observe(ctx, ctx.reference, n, k, False, seed=3, backward=False).watch.kept_bytes for k in range(1, n + 1)]
        return mine, ref, plain(ctx, n, False, seed=3).watch.kept_bytes

    return ctx.cached("memory", go)


@CHECKS.add("memory-saved", "Autograd keeps only each region's input: far less than the plain forward")
def memory_saved(ctx):
    n = MEMORY_BLOCKS
    mine, ref, full = memory_curves(ctx)
    per_block = full / n
    # Between forward and backward only the kept tensors live; in backward one region is rebuilt at
    # a time, so the peak adds the largest region's activations (the sqrt(n) trade-off).
    peak = [r + max(len(b) for b in expected_boundaries(n, k)) * per_block for k, r in enumerate(ref, start=1)]
    kib = 1024.0
    ctx.data["curves"] = {
        "title": f"Activation KiB kept for backward, {n} blocks, by segments",
        "x": "segments",
        "series": {"yours": [m / kib for m in mine], "reference": [r / kib for r in ref],
                   "no checkpointing": [full / kib] * n, "peak in backward (reference, est.)": [p / kib for p in peak]},
    }
    for k, (m, r) in enumerate(zip(mine, ref), start=1):
        if m > r * MEMORY_SLACK:
            fail(f"{n} blocks, segments={k}: autograd kept {m / kib:.1f} KiB of activations for backward; the reference "
                 f"keeps {r / kib:.1f} KiB (each region's input only) and a plain forward {full / kib:.1f} KiB. Run "
                 "every block inside a checkpoint region, and do not keep or recompute outputs outside them")
    # Nothing kept because no block ran is no saving.
    happened((i for k in range(1, n + 1)
              for i, calls in observe(ctx, ctx.solution, n, k, False, seed=3, backward=False).watch.forward_calls.items()
              if calls), "a block's forward")


@CHECKS.add("recompute-once", "Each block runs once in forward and is recomputed exactly once in backward")
def recompute_once(ctx):
    for n_blocks, segments, x_grad in CASES:
        w = observe(ctx, ctx.solution, n_blocks, segments, x_grad).watch
        where = f"{n_blocks} blocks, segments={segments}"
        forward = [w.forward_calls.get(i, 0) for i in range(n_blocks)]
        again = [w.recomputed.get(i, 0) for i in range(n_blocks)]
        if forward != [1] * n_blocks:
            fail(f"{where}: forward calls per block {fmt(forward)}, expected 1 each; every block runs exactly once "
                 "in the forward pass")
        if again != [1] * n_blocks:
            never = [i for i, a in enumerate(again) if a == 0]
            why = (f": blocks {fmt(never)} were never recomputed, so they were not checkpointed and kept all their "
                   "activations" if never else
                   ": a block recomputed twice pays twice (nested checkpoints, or a region run again by hand)")
            fail(f"{where}: forward calls per block during backward {fmt(again)}, expected 1 each{why}")


@CHECKS.add("validation", "ValueError when segments < 1 or segments > len(blocks)")
def validation(ctx):
    blocks, x, _ = build(ctx, 4)
    for segments in (0, -1, 5):
        try:
            result = ctx.solution.checkpointed_forward(blocks, x, segments=segments)
        except ValueError:
            continue
        except Exception as exc:  # noqa: BLE001 - the wrong exception is the finding
            fail(f"4 blocks, segments={segments}: expected ValueError, got {type(exc).__name__}: {exc}")
        shape = tuple(result.shape) if isinstance(result, torch.Tensor) else type(result).__name__
        fail(f"4 blocks, segments={segments}: expected ValueError (segments must be in 1..4), but it returned a "
             f"result ({shape})")
