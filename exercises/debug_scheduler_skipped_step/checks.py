"""Checks for debug_scheduler_skipped_step: train the learner's script and the fixed one on the same
classifier, data, optimizer and warm-up schedule (built from the fixed script's own definitions, so
an edited schedule cannot change the test), then ask the drill's three questions (see
quizapp.checking.drill).

In this drill a run's learning rates are the symptom, so honest-fix leaves them to the symptom
check (`check_lr=False`), which holds every real step to the schedule; steps are counted as
scaler.step calls, taken or skipped (drill.attempts).
"""

from __future__ import annotations

import torch

from quizapp.checking import drill
from quizapp.checking.harness import Checks, Required, fail, fmt, is_close
from quizapp.checking.instrument import split_iterations

LR, MOMENTUM = 0.2, 0.9
MODEL_SEED, DATA_SEED = 21, 22  # not the script's: the fix must hold on other draws too
# Exact rewrites of the fix (step the scheduler when the scale did not go down; when a wrapped
# optimizer.step reports it ran) train bit-for-bit like the fixed script: over 6 seeds x 40 steps
# the largest difference was 0 in the losses and 0 in the weights. Checking the loss for inf instead
# of the gradients (the scheduler still steps on every skip) ends 1e-1 or more away in the weights.
# 1e-5 leaves room for kernels that round differently on another device.
TOLERANCE = drill.Tolerance(loss_rtol=1e-5, param_rtol=1e-5,
                            why="6 seeds of two exact rewrites: 0 apart; the schedule run ahead: 1e-1 or more")
SYMPTOM_ID = "lr-follows-real-steps"

CHECKS = Checks(Required("train", "(model, batches, optimizer, scheduler, log=None) -> list[float]",
                         sample_args=(None, None, None, None)))


def one_run(ctx, module, label):
    ref = ctx.reference
    torch.manual_seed(MODEL_SEED)
    model = ref.Classifier().to(ctx.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    data = ref.make_batches(DATA_SEED, ctx.device)
    scheduler = ref.make_scheduler(optimizer)  # before drill.run wraps optimizer.step (LRScheduler wraps it too)
    return drill.run(ctx, label, lambda: module.train(model, data, optimizer, scheduler), model, optimizer)


def runs(ctx):
    return drill.both_runs(ctx, one_run, "your train()", "the fixed train()")


def real_step_iterations(trace):
    """The iteration (0-based batch index) of each optimizer step that really ran."""
    return [i for i, events in enumerate(split_iterations(trace.events)) if any(e.kind == "opt.step" for e in events)]


def symptom(ctx, yours, fixed):
    ref = ctx.reference
    iterations = real_step_iterations(yours)
    skipped = yours.scaler_steps - yours.steps
    for k, lrs in enumerate(yours.lrs):
        want = LR * ref.warmup_factor(k)
        if not is_close(lrs[0], want, drill.SETTING):
            at = iterations[k] if k < len(iterations) else None
            where = f" (iteration {at}, after {at - k} iterations whose step the GradScaler skipped)" if at is not None else ""
            peak = next((j for j, v in enumerate(yours.lrs) if v[0] >= LR * (1 - 1e-9)), None)
            warm = (f"; the warm-up should take {ref.WARMUP} optimizer steps, yours reached the peak lr {fmt(LR)} at "
                    f"optimizer step {peak}" if peak is not None and peak < ref.WARMUP - 1 else "")
            fail(f"the symptom is still there: the learning rate runs ahead of the optimizer. Optimizer step {k}{where} "
                 f"ran at lr {lrs[0]:.4g} where the schedule gives {want:.4g} for step {k}{warm}. The GradScaler "
                 f"skipped {skipped} of {yours.scaler_steps} steps (inf/NaN gradients)")


KEEP = [drill.keeps_autocast(torch.float16), drill.keeps_scaler()]


drill.register(CHECKS, runs=runs, symptom_id=SYMPTOM_ID,
               symptom_title="Every optimizer step that ran used the schedule's lr for its own step count",
               symptom=symptom, tolerance=TOLERANCE, keep=KEEP, check_lr=False)
