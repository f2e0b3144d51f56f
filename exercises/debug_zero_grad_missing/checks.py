"""Checks for debug_zero_grad_missing: train the learner's script and the fixed one on the same MLP
classifier and data (built from the fixed script's own definitions, so an edited model or data
cannot change the test), recording at every optimizer step the gradient it steps with and the
gradient of that step's own batch, then ask the drill's three questions (see quizapp.checking.drill)."""

from __future__ import annotations

import math

import torch

from quizapp.checking import drill
from quizapp.checking.harness import Checks, Required, fail, fmt, plural

LR, MOMENTUM = 0.05, 0.9
MODEL_SEED, DATA_SEED = 31, 32  # not the script's: the fix must hold on other draws too
CARRY_RTOL = 1e-6  # the gradient stepped with must equal the step's own, up to float rounding
# optimizer.zero_grad() before backward or after the step, model.zero_grad(set_to_none=False) and
# p.grad = None give identical runs over 6 seeds x 40 steps (clearing .grad is exact). The near
# misses end far off, relative to the largest loss / weight: momentum buffers cleared every step
# 0.37 / 1.4, every other step's gradients cleared 0.32 / 1.3, momentum set to 0 0.79 / 4.0.
TOLERANCE = drill.Tolerance(loss_rtol=1e-5, param_rtol=1e-5,
                            why="6 seeds of four exact rewrites: identical runs; near misses 0.3 or more off")

CHECKS = Checks(Required("train", "(model, batches, optimizer) -> list[float]", sample_args=(None, None, None)))


def watch_gradients(model, optimizer, extra: dict) -> list:
    """At every optimizer step, record the norm of the gradient it steps with ("used"), of the
    gradients the backward passes since the last step produced ("own"), and of their difference
    ("carried": what was left in .grad from before); and the optimizer's state size.
    Returns the hook handles, to remove after the run."""
    params = list(model.parameters())
    fresh: list = [None] * len(params)
    extra.update(used=[], own=[], carried=[], state=[])

    def on_grad(i):
        def hook(grad):
            fresh[i] = grad.detach().clone() if fresh[i] is None else fresh[i] + grad.detach()
        return hook

    handles = [p.register_hook(on_grad(i)) for i, p in enumerate(params)]
    real_step = optimizer.step

    def step(*args, **kwargs):
        used, own, carried = 0.0, 0.0, 0.0
        for p, f in zip(params, fresh):
            g = p.grad.detach().double() if p.grad is not None else torch.zeros(p.shape, dtype=torch.float64,
                                                                                device=p.device)
            f = f.double() if f is not None else torch.zeros_like(g)
            used += float(g.pow(2).sum())
            own += float(f.pow(2).sum())
            carried += float((g - f).pow(2).sum())
        extra["used"].append(math.sqrt(used))
        extra["own"].append(math.sqrt(own))
        extra["carried"].append(math.sqrt(carried))
        extra["state"].append(len(optimizer.state))
        for i in range(len(fresh)):
            fresh[i] = None
        return real_step(*args, **kwargs)

    optimizer.step = step
    return handles


def one_run(ctx, module, label):
    ref = ctx.reference
    torch.manual_seed(MODEL_SEED)
    model = ref.Classifier().to(ctx.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    data = ref.make_batches(DATA_SEED, ctx.device)
    extra: dict = {}
    handles = watch_gradients(model, optimizer, extra)
    try:
        return drill.run(ctx, label, lambda: module.train(model, data, optimizer), model, optimizer, extra=extra)
    finally:
        for h in handles:
            h.remove()


def runs(ctx):
    return drill.both_runs(ctx, one_run, "your train()", "the fixed train()")


def symptom(ctx, yours, fixed):
    used, own, carried = yours.extra["used"], yours.extra["own"], yours.extra["carried"]
    off = [i for i, (c, o) in enumerate(zip(carried, own)) if not math.isfinite(c) or c > CARRY_RTOL * max(o, 1e-12)]
    losses = (f"yours: {drill.loss_log(yours.losses, len(yours.losses) - 1)}; the fixed script's: "
              f"{drill.loss_log(fixed.losses, len(fixed.losses) - 1)}")
    if off:
        i, last = off[0], off[-1]
        if own[i] > 0 and used[i] < CARRY_RTOL * own[i]:
            fail(f"the symptom is still there: at step {i} the optimizer stepped with a gradient of norm "
                 f"{fmt(used[i])} where the gradient of that step's batch has norm {fmt(own[i])}: the gradient was "
                 f"cleared after backward and before the step used it ({len(off)} of {len(used)} steps); {losses}")
        clipped = " (clip_grad_norm_ rescaled it as well)" if yours.of("clip") else ""
        fail(f"the symptom is still there: the gradients add up across steps. At step {last} the optimizer stepped "
             f"with a gradient of norm {fmt(used[last])} where the gradient of that step's batch has norm "
             f"{fmt(own[last])}; they differ by {fmt(carried[last])} (norm of the difference): .grad still held "
             f"gradients of earlier steps{clipped}. It starts at step {i} and happens at {len(off)} of {len(used)} "
             f"steps; {losses}")
    bad = drill.first_bad(yours.losses)
    if bad is not None:
        fail(f"the loss is {yours.losses[bad]} at step {bad} ({drill.loss_log(yours.losses, bad)})")


def keeps_optimizer_settings() -> drill.Keep:
    """The optimizer's momentum, weight decay, dampening and Nesterov stay the grader's."""

    def problem(yours, fixed):
        names = ("momentum", "weight_decay", "dampening", "nesterov")
        # The settings each update used (drill.run reads them after the learner's own step hooks have run).
        for i, (a, b) in enumerate(zip(yours.settings, fixed.settings)):
            for group_a, group_b in zip(a, b):
                for name in names:
                    x, y = group_a.get(name), group_b.get(name)
                    if x != y:
                        return (f"the optimizer's {name} at step {i} was {fmt(x)} where the fixed script uses "
                                f"{fmt(y)}: changing the optimizer damps the symptom, it does not remove its cause")
        return None

    return drill.Keep("optimizer settings", problem)


def no_added_clipping() -> drill.Keep:
    def problem(yours, fixed):
        clips = yours.of("clip")
        if clips and not fixed.of("clip"):
            return (f"clip_grad_norm_ ran {plural(len(clips), 'time')} where the fixed script never clips: clipping caps "
                    "the summed gradient instead of stopping the sum")
        return None

    return drill.Keep("no added clipping", problem)


def advice(yours, fixed):
    """Momentum buffers thrown away: the gradient is right, the optimizer's memory is not."""
    own, carried = yours.extra["own"], yours.extra["carried"]
    fresh = all(c <= CARRY_RTOL * max(o, 1e-12) for c, o in zip(carried, own))
    empty = [i for i, (a, b) in enumerate(zip(yours.extra["state"], fixed.extra["state"])) if a < b]
    if fresh and empty:
        return (f"before {len(empty)} of the {len(yours.extra['state'])} steps the optimizer's state (its momentum "
                "buffers) was empty where the fixed script's holds them: zero_grad clears the gradients, and "
                "only them; the momentum must carry over from step to step")
    return None


drill.register(CHECKS, runs=runs, symptom_id="fresh-gradient-each-step",
               symptom_title="Every one of the 40 steps uses the gradient of its own batch, nothing left over",
               symptom=symptom, tolerance=TOLERANCE, keep=[keeps_optimizer_settings(), no_added_clipping()],
               advice=advice)
