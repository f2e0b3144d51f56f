"""Checks for debug_accum_not_divided: train the learner's script and the fixed one on the same
regression MLP and micro-batches (built from the fixed script's own definitions, so an edited model
or data cannot change the test), 8 micro-batches per step, then ask the drill's three questions
(see quizapp.checking.drill)."""

from __future__ import annotations

import math

import torch

from quizapp.checking import drill
from quizapp.checking.harness import Checks, Required, Tol, fail, fmt, is_close, listed, plural

LR, MOMENTUM = 0.1, 0.9
MODEL_SEED, DATA_SEED = 21, 22  # not the script's: the fix must hold on other draws too
BLOWUP = 3.0  # a step loss above 3x the first one is the explosion (the fixed runs never pass 1x)
# Dividing the loss by accum_steps, dividing the accumulated gradients by it before the step, and
# weighting each micro-batch's summed loss by 1/128 give identical runs over 6 seeds x 20 steps
# (dividing by 8 is exact in binary); the same gradient summed in another order (one batch of 128)
# ends 1.3e-7 (losses) and 1.0e-6 (weights) away. The near misses end far off: the loss divided by
# the micro-batch size 0.3 (losses) / 0.5 (weights), by the micro-step number (nanoGPT#605) 2 / 8,
# gradients zeroed inside the group 1.9 / 1.3.
TOLERANCE = drill.Tolerance(loss_rtol=1e-5, param_rtol=1e-5,
                            why="6 seeds: exact rewrites identical, another summation order 1e-6 off, near misses 0.3 or more")

CHECKS = Checks(Required("train", "(model, batches, optimizer, accum_steps) -> list[float]",
                         sample_args=(None, None, None, 8)))


def grad_norms(model, optimizer, into: list) -> None:
    """Record the total gradient norm the optimizer is about to step with, at every step."""
    real_step = optimizer.step
    params = list(model.parameters())

    def step(*args, **kwargs):
        grads = [p.grad.detach().double().flatten() for p in params if p.grad is not None]
        into.append(float(torch.cat(grads).norm()) if grads else 0.0)
        return real_step(*args, **kwargs)

    optimizer.step = step


def one_run(ctx, module, label):
    ref = ctx.reference
    torch.manual_seed(MODEL_SEED)
    model = ref.Regressor().to(ctx.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    data = ref.make_batches(DATA_SEED, ctx.device)
    extra = {"grad_norms": []}
    grad_norms(model, optimizer, extra["grad_norms"])
    return drill.run(ctx, label, lambda: module.train(model, data, optimizer, ref.ACCUM), model, optimizer,
                     extra=extra)


def runs(ctx):
    return drill.both_runs(ctx, one_run, "your train()", "the fixed train()")


def first_gradient(yours, fixed) -> str:
    """The first step's gradient norm, next to the fixed script's on the same weights and samples."""
    a, b = yours.extra["grad_norms"], fixed.extra["grad_norms"]
    if not a or not b:
        return ""
    return (f"; the first step's gradient had norm {fmt(a[0])} where the fixed script's, on the same weights and "
            f"the same 128 samples, is {fmt(b[0])}")


def symptom(ctx, yours, fixed):
    losses = yours.losses
    if not losses:
        fail(f"the training function returned no per-step losses ({type(yours.returned).__name__}), so the loss "
             "curve cannot be judged; return the loss of every optimizer step, as the script does")
    first = losses[0]
    bad = next((i for i, v in enumerate(losses) if not math.isfinite(v) or v > BLOWUP * first), None)
    if bad is not None:
        fail(f"the symptom is still there: the loss explodes, {fmt(losses[bad])} at step {bad} against "
             f"{fmt(first)} at step 0 (yours: {drill.loss_log(losses, bad)}; the fixed script's: "
             f"{drill.loss_log(fixed.losses, bad)}){first_gradient(yours, fixed)}")
    nan_params = drill.nonfinite_params(yours)
    if nan_params:
        fail(f"every loss is finite, but after training {listed(nan_params)} hold NaN or inf")


def keeps_accumulation() -> drill.Keep:
    """Still one optimizer step per 8 micro-batches of 16, as in the fixed script."""

    def problem(yours, fixed):
        if yours.steps > fixed.steps:
            return (f"{yours.steps} optimizer steps ran where the fixed script takes {fixed.steps} (one per "
                    f"{len(fixed.forwards) // max(fixed.steps, 1)} micro-batches): stepping on every micro-batch "
                    "drops the accumulation, and the 128-sample batch it stands for, instead of fixing it")
        small = {f["n"] for f in fixed.forwards}
        big = [f for f in yours.forwards if f["n"] not in small]
        if big:
            return (f"{len(big)} forward passes ran on {big[0]['n']} samples where the fixed script runs micro-"
                    f"batches of {fmt(sorted(small))}: joining the micro-batches into one batch removes the "
                    "accumulation (and the memory it saves) instead of fixing it")
        return None

    return drill.Keep("gradient accumulation", problem)


def no_added_clipping() -> drill.Keep:
    def problem(yours, fixed):
        clips = yours.of("clip")
        if clips and not fixed.of("clip"):
            return (f"clip_grad_norm_ ran {plural(len(clips), 'time')} where the fixed script never clips: clipping caps "
                    "the oversized gradient instead of giving it the right size")
        return None

    return drill.Keep("no added clipping", problem)


def advice(yours, fixed):
    """A gradient of the wrong size at the very first step (same weights, same samples) is a wrong
    scaling: the loss divided by something other than the number of micro-batches, or gradients
    zeroed inside the group."""
    zeros_yours, zeros_fixed = len(yours.of("zero_grad")), len(fixed.of("zero_grad"))
    if zeros_yours > zeros_fixed:
        return (f"zero_grad ran {zeros_yours} times where the fixed script runs it {zeros_fixed} times: clearing the "
                "gradients inside a group of micro-batches keeps only the last micro-batch's gradient")
    a, b = yours.extra.get("grad_norms"), fixed.extra.get("grad_norms")
    if a and b and b[0] > 0 and math.isfinite(a[0]) and not is_close(a[0], b[0], Tol(rtol=1e-3)):
        return (f"at step 0, on the same weights and samples, your gradient's norm is {a[0] / b[0]:.3g} times the "
                "fixed script's: the accumulated gradient must equal the mean gradient over all the step's "
                "samples, so each micro-batch's mean loss is divided by the number of micro-batches, here 8")
    return None


drill.register(CHECKS, runs=runs, symptom_id="loss-does-not-explode",
               symptom_title="The loss of the 20 accumulated steps stays bounded (never 3x the first step's)",
               symptom=symptom, tolerance=TOLERANCE, keep=[keeps_accumulation(), no_added_clipping()],
               advice=advice)
