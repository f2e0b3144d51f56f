"""Checks for debug_clip_before_unscale: train the learner's script and the fixed one on the same
classifier and data (built from the fixed script's own definitions, so an edited model or data
cannot change the test), then ask the drill's three questions (see quizapp.checking.drill)."""

from __future__ import annotations

import torch

from quizapp.checking import drill
from quizapp.checking.harness import Checks, Required, Tol, fail, fmt, is_close
from quizapp.checking.instrument import split_iterations

LR, MOMENTUM = 0.05, 0.9
MODEL_SEED, DATA_SEED = 21, 22  # not the script's: the fix must hold on other draws too
WINDOW = 5  # steps averaged at each end of the loss curve
# Exact rewrites of the fix (unscale_ then clip; the clip over the optimizer's own parameter list;
# the scaled loss kept in a variable, zero_grad moved) train bit-for-bit like the fixed script: over
# 6 seeds x 40 steps the largest difference was 0 in the losses and 0 in the weights. Clipping after
# scaler.step (no update is clipped) ends 3e-2 to 1.6e-1 away in the losses and 8e-2 to 2e-1 in the
# weights. 1e-5 leaves room for kernels that round differently on another device.
TOLERANCE = drill.Tolerance(loss_rtol=1e-5, param_rtol=1e-5,
                            why="6 seeds of two exact rewrites: 0 apart; clipping after the step: 8e-2 or more")

CHECKS = Checks(Required("train", "(model, batches, optimizer, log=None) -> list[float]",
                         sample_args=(None, None, None)))


def one_run(ctx, module, label):
    ref = ctx.reference
    torch.manual_seed(MODEL_SEED)
    model = ref.Classifier().to(ctx.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    data = ref.make_batches(DATA_SEED, ctx.device)
    return drill.run(ctx, label, lambda: module.train(model, data, optimizer), model, optimizer)


def runs(ctx):
    return drill.both_runs(ctx, one_run, "your train()", "the fixed train()")


def ends(losses):
    """Mean loss of the first and of the last WINDOW steps."""
    head, tail = losses[:WINDOW], losses[-WINDOW:]
    return sum(head) / len(head), sum(tail) / len(tail)


def symptom(ctx, yours, fixed):
    if not yours.losses:
        fail("train() returned no per-step losses, so there is no loss curve to look at")
    (y0, y1), (f0, f1) = ends(yours.losses), ends(fixed.losses)
    if (y0 - y1) < 0.5 * (f0 - f1):
        clips_yours, clips_fixed = yours.of("clip"), fixed.of("clip")
        norms = ""
        if clips_yours and clips_fixed:
            seen, want = clips_yours[0].info["total_norm"], clips_fixed[0].info["total_norm"]
            norms = (f"; clip_grad_norm_ measured a total gradient norm of {seen:.4g} at step 0 (max_norm "
                     f"{fmt(clips_yours[0].info['max_norm'])}), where the fixed script measures {want:.4g} on the "
                     "same model and batch")
            if is_close(seen, want, Tol(rtol=1e-3)):
                norms += (": the clipping sees the right gradients, so look at what happens to them between the "
                          "clipping and the update")
        fail(f"the symptom is still there: the loss barely moves. Averaged over the first and last {WINDOW} of "
             f"{len(yours.losses)} steps it goes from {y0:.4f} to {y1:.4f} ({100 * (y0 - y1) / y0:.1f}% down), "
             f"where the fixed script goes from {f0:.4f} to {f1:.4f} ({100 * (f0 - f1) / f0:.0f}% down){norms}")


def advice(yours, fixed):
    """Clipping that runs after the optimizer step clips gradients nobody uses any more."""
    late = 0
    for events in split_iterations(yours.events):
        kinds = [e.kind for e in events]
        if "clip" in kinds and "opt.step" in kinds and kinds.index("clip") > kinds.index("opt.step"):
            late += 1
    if late:
        return (f"in {late} of {len(yours.losses)} iterations clip_grad_norm_ ran after the optimizer step: it "
                "clips gradients that were already used, so no update is clipped; unscale, clip, then step")
    return None


drill.register(CHECKS, runs=runs, symptom_id="loss-decreases",
               symptom_title="The loss falls over the 40 steps about as far as the fixed script's",
               symptom=symptom, tolerance=TOLERANCE,
               keep=[drill.keeps_autocast(torch.float16), drill.keeps_scaler(),
                     drill.keeps_clipping(0.5)],
               advice=advice)
