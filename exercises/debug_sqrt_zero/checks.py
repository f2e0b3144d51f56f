"""Checks for debug_sqrt_zero: train the learner's script and the fixed one on the same embedding net
and pairs (built from the fixed script's own definitions, so an edited model or data cannot change
the test), then ask the drill's three questions (see quizapp.checking.drill)."""

from __future__ import annotations

import torch

from quizapp.checking import drill
from quizapp.checking.harness import Checks, Required

LR, MOMENTUM = 0.05, 0.9
MODEL_SEED, DATA_SEED = 21, 22  # not the script's: the fix must hold on other draws too
# Measured over 6 seeds x 40 steps against torch.linalg.vector_norm: Tensor.norm is identical, a
# sqrt fed a safe value through a double torch.where, sqrt(s + 1e-9) (the source's fix) and
# sqrt(s.clamp(min=1e-6)) stay within 4.1e-7 (weights) and 2.3e-7 (losses); sqrt(s + 1e-6) and
# F.pairwise_distance (which adds 1e-6 to the difference) within 2.7e-6. sqrt(s + 1e-4) ends 2.5e-4
# away, sqrt(s + 1e-2) 2.5e-2, and dropping the zero-distance pairs 1.3e-1.
TOLERANCE = drill.Tolerance(loss_rtol=1e-5, param_rtol=1e-5,
                            why="6 seeds of exact rewrites: 4.1e-7 apart; an epsilon of 1e-4 in the sqrt: 2.5e-4")

CHECKS = Checks(Required("train", "(model, batches, optimizer) -> list[float]", sample_args=(None, None, None)))


def one_run(ctx, module, label):
    ref = ctx.reference
    torch.manual_seed(MODEL_SEED)
    model = ref.EmbeddingNet().to(ctx.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    data = ref.make_batches(DATA_SEED, ctx.device)
    return drill.run(ctx, label, lambda: module.train(model, data, optimizer), model, optimizer)


def runs(ctx):
    return drill.both_runs(ctx, one_run, "your train()", "the fixed train()")


def symptom(ctx, yours, fixed):
    drill.require_finite(yours, "a pair at distance 0 still sends a NaN gradient into the step")


def advice(yours, fixed):
    """At step 0 both runs see the same weights and pairs, so any difference in the loss is the loss
    function's: lower means larger distances (an epsilon in the sqrt), higher means pairs dropped."""
    if not (yours.losses and fixed.losses):
        return None
    a, b = yours.losses[0], fixed.losses[0]
    if a < b * (1 - 1e-5):
        return (f"at step 0, on the same weights and pairs, your loss is {a:.7g} where the exact one is {b:.7g}: "
                "an epsilon inside the sqrt (or a clamp) this large makes every distance longer, so dissimilar "
                "pairs look farther apart than they are; the fixed script keeps the exact distance")
    if a > b * (1 + 1e-5):
        return (f"at step 0, on the same weights and pairs, your loss is {a:.7g} where the fixed script's is {b:.7g}: "
                "dropping the pairs at distance 0 changes the mean over the batch; keep every pair and give the "
                "distance a zero gradient at 0")
    return None


drill.register(CHECKS, runs=runs, symptom_id="gradients-finite",
               symptom_title="Every loss of the 40 steps and every weight stays finite",
               symptom=symptom, tolerance=TOLERANCE, advice=advice)
