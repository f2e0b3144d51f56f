"""Checks for debug_log_softmax: train the learner's script and the fixed one on the same cosine
classifier and data (built from the fixed script's own definitions, so an edited model or data
cannot change the test), then ask the drill's three questions (see quizapp.checking.drill)."""

from __future__ import annotations

import torch

from quizapp.checking import drill
from quizapp.checking.harness import Checks, Required

LR, MOMENTUM = 0.03, 0.9
MODEL_SEED, DATA_SEED = 11, 12  # not the script's: the fix must hold on other draws too
# F.cross_entropy, log_softmax + gather and logsumexp - logit differ by float32 rounding only:
# over 6 seeds x 40 steps their runs stay within 1.5e-5 (weights) of each other, while log(p + eps)
# or a clamped probability ends 0.7 to 1.2 away.
TOLERANCE = drill.Tolerance(loss_rtol=1e-4, param_rtol=1e-4, why="6 seeds of three exact rewrites: 1.5e-5 apart")

CHECKS = Checks(Required("train", "(model, batches, optimizer) -> list[float]", sample_args=(None, None, None)))


def one_run(ctx, module, label):
    ref = ctx.reference
    torch.manual_seed(MODEL_SEED)
    model = ref.CosineClassifier().to(ctx.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    data = ref.make_batches(DATA_SEED, ctx.device)
    extra: dict = {}
    with drill.counting_float64(extra):
        return drill.run(ctx, label, lambda: module.train(model, data, optimizer), model, optimizer, extra=extra)


def runs(ctx):
    return drill.both_runs(ctx, one_run, "your train()", "the fixed train()")


def symptom(ctx, yours, fixed):
    drill.require_finite(yours, "the gradients still are not")


def advice(yours, fixed):
    """A loss below the exact cross-entropy of the very first batch (same model, same logits) is a
    capped one: log(p + eps) or a clamped p reports at most -log(eps) per sample."""
    if yours.losses and fixed.losses and yours.losses[0] < fixed.losses[0] * (1 - 1e-3):
        return (f"at step 0, on the same model and batch, your loss is {yours.losses[0]:.4g} where the exact "
                f"cross-entropy is {fixed.losses[0]:.4g}: an epsilon inside the log or a clamped probability caps "
                "each sample's loss, so the loss is finite but wrong and its gradient vanishes for the worst samples")
    return None


drill.register(CHECKS, runs=runs, symptom_id="loss-finite",
               symptom_title="Every loss of the 40 steps and every weight stays finite",
               symptom=symptom, tolerance=TOLERANCE, advice=advice, keep=[drill.keeps_float32()])
