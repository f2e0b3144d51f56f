"""Checks for debug_scaler_per_epoch: train the learner's script and the fixed one on the same
classifier and data (built from the fixed script's own definitions, so an edited model or data
cannot change the test), then ask the drill's three questions (see quizapp.checking.drill).

The optimizer steps the GradScaler skips are this drill's symptom; honest-fix counts scaler.step
calls, taken or skipped (drill.attempts), which a removed or skipped step still lowers.
"""

from __future__ import annotations

import torch

from quizapp.checking import drill
from quizapp.checking.harness import Checks, Required, fail
from quizapp.checking.instrument import split_iterations

LR, MOMENTUM = 0.002, 0.9
MODEL_SEED, DATA_SEED = 21, 22  # not the script's: the fix must hold on other draws too
# Exact rewrites of the fix (one scaler made in train and passed down; a scaler per epoch that loads
# the previous one's state_dict) train bit-for-bit like the fixed script: over 6 seeds x 48 steps
# the largest difference was 0 in the losses and 0 in the weights. A scaler per epoch that backs off
# faster (backoff_factor 1/16) ends 3e-2 or more away. 1e-5 leaves room for kernels that round
# differently on another device.
TOLERANCE = drill.Tolerance(loss_rtol=1e-5, param_rtol=1e-5,
                            why="6 seeds of two exact rewrites: 0 apart; a faster back-off per epoch: 3e-2 or more")
SYMPTOM_ID = "no-steps-skipped-again"

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


def per_epoch(trace, per):
    """(steps skipped, loss scale at the epoch's first step) for each epoch of `per` iterations."""
    out = []
    iterations = split_iterations(trace.events)  # each starts at a backward, so scale() falls in the one before
    scales = [e.info["scale"] for e in trace.of("scale")]
    for start in range(0, len(iterations), per):
        epoch = [e for events in iterations[start:start + per] for e in events]
        skipped = sum(e.kind == "scaler.step" for e in epoch) - sum(e.kind == "opt.step" for e in epoch)
        out.append((skipped, scales[start] if start < len(scales) else None))
    return out


def symptom(ctx, yours, fixed):
    skipped, wanted = yours.scaler_steps - yours.steps, fixed.scaler_steps - fixed.steps
    if skipped > wanted:
        per = len(ctx.reference.make_batches(DATA_SEED))
        epochs_yours, epochs_fixed = per_epoch(yours, per), per_epoch(fixed, per)
        counts = ", ".join(str(n) for n, _ in epochs_yours)
        scales = ", ".join(f"{s:.0f}" if s is not None else "none" for _, s in epochs_yours)
        fixed_counts = ", ".join(str(n) for n, _ in epochs_fixed)
        fixed_scales = ", ".join(f"{s:.0f}" if s is not None else "none" for _, s in epochs_fixed)
        fail(f"the symptom is still there: the GradScaler skipped {skipped} of {yours.scaler_steps} optimizer steps "
             f"({counts} in the {len(epochs_yours)} epochs), where the fixed script skips {wanted} ({fixed_counts}). "
             f"The loss scale at the first step of each epoch was {scales} (fixed script: {fixed_scales})")


KEEP = [drill.keeps_autocast(torch.float16), drill.keeps_scaler()]


drill.register(CHECKS, runs=runs, symptom_id=SYMPTOM_ID,
               symptom_title="The GradScaler skips no more steps than the fixed script's (none after the first epoch)",
               symptom=symptom, tolerance=TOLERANCE, keep=KEEP)
