"""Behavioural checks for grad_accumulation: run the learner's loop and a plain big-batch loop
(one step per group on the concatenated group) from the same start, and compare the gradients
each step used and the parameters at the end."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from quizapp.checking import accumulation, instrument
from quizapp.checking.harness import Checks, Required, fail, happened, max_param_diff
from quizapp.checking.instrument import LOG

IN, HIDDEN, OUT = 6, 12, 3
# float32 tolerance, relative to each tensor's largest entry. Accumulating n_i/N-weighted
# micro-batch gradients sums the same terms in another order than the big batch's mean: measured
# at most 1.5e-7 (gradients) and 1.1e-7 (parameters after all steps) on CPU, for SGD-momentum and
# AdamW. 2e-5 leaves 100x room for CUDA's other reduction orders, while the smallest real bug here
# (a 2-sample last micro-batch weighted 1/4 instead of 2/10) is off by more than 1e-2.
PARAM_RTOL = 2e-5
GRAD_RTOL = 2e-5
CLIP = 0.05  # below every group's gradient norm in the clip scenario, so every step is clipped

# name -> (micro-batch sizes, accum_steps)
SCENARIOS = {
    "divisible": ([4] * 6, 3),            # 2 groups of 3
    "trailing": ([4] * 7, 3),             # 3 + 3 + 1: the trailing group must be stepped
    "short-last": ([8, 8, 8, 8, 8, 2], 4),  # groups of 32 and 10 samples: weights 8/10 and 2/10
    # A trailing group of every length 1..accum_steps-1 (with 4 and 5): a loop that re-derives the
    # group end from the remainder (timm's, for 7 with accum 4 or 13 with accum 5) splits the
    # trailing group into two steps for some of these counts only.
    "remainder-1-of-4": ([4] * 5, 4),
    "remainder-2-of-4": ([4] * 6, 4),
    "remainder-3-of-4": ([4] * 7, 4),
    "remainder-3-of-5": ([4] * 13, 5),
    "remainder-4-of-5": ([4] * 14, 5),
}
REMAINDERS = [name for name in SCENARIOS if name.startswith("remainder-")]
OPTIMIZERS = ("SGD-momentum", "AdamW")

CHECKS = Checks(Required(
    "train_with_accumulation",
    "(model, loader, optimizer, loss_fn, accum_steps, *, max_grad_norm=None) -> int",
    sample_args=(None, None, None, None, 2), sample_kwargs={"max_grad_norm": None},
))


def build(device, sizes, opt_name, seed=0):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.Tanh(), torch.nn.Linear(HIDDEN, OUT)).to(device)
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(sum(sizes), IN, generator=g)
    y = torch.sin(x @ torch.randn(IN, OUT, generator=g))
    loader, start = [], 0
    for n in sizes:
        loader.append((x[start:start + n].to(device), y[start:start + n].to(device)))
        start += n
    if opt_name == "SGD-momentum":
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1)
    return model, loader, optimizer


@dataclass
class Run:
    returned: object
    events: list
    step_grads: list  # per optimizer.step(): the gradients it used (clones)
    forwards: list    # batch size of each model forward, in order
    model: torch.nn.Module
    grads_after: list


def grads_of(model) -> list:
    return [None if p.grad is None else p.grad.detach().clone() for p in model.parameters()]


def record_steps(optimizer, model):
    """The gradients each step() of the plain loop used (the solution's are read by watch_optimizer)."""
    grads = []
    inner = optimizer.step

    def step(*args, **kwargs):
        grads.append(grads_of(model))
        return inner(*args, **kwargs)

    optimizer.step = step
    return grads


def solution_run(ctx, scenario, opt_name, clip=None) -> Run:
    sizes, k = SCENARIOS[scenario]

    def go():
        LOG.reset(ctx.device.type)
        model, loader, optimizer = build(ctx.device, sizes, opt_name)
        step_grads = []
        # Read when the step is entered, after an optimizer.step(closure)'s closure has run.
        instrument.watch_optimizer(optimizer, before_step=lambda: step_grads.append(grads_of(model)))
        real_model_zero = model.zero_grad

        def model_zero_grad(*args, **kwargs):
            LOG.add("zero_grad", who="model")
            return real_model_zero(*args, **kwargs)

        model.zero_grad = model_zero_grad
        forwards = []

        def hook(module, inputs, output):
            if not torch.is_grad_enabled():
                return  # builds no graph: nothing to accumulate
            forwards.append(int(inputs[0].shape[0]))
            LOG.add("forward", n=int(inputs[0].shape[0]))

        # On the first layer, not on the model: model.forward(x) skips the model's own hooks but
        # still calls its layers.
        handle = model[0].register_forward_hook(hook)
        LOG.watched_params = list(model.parameters())
        try:
            with ctx.given(f"{len(sizes)} micro-batches of sizes {sizes}, accum_steps={k}, max_grad_norm={clip}"):
                returned = ctx.solution.train_with_accumulation(model, loader, optimizer, F.mse_loss, k,
                                                                max_grad_norm=clip)
        finally:
            handle.remove()
        return Run(returned, list(LOG.events), step_grads, forwards, model, grads_of(model))

    return ctx.cached(("solution", scenario, opt_name, clip), go)


def truth_run(ctx, scenario, opt_name, clip=None) -> Run:
    """One plain step per group on the concatenated group: what accumulation must reproduce."""
    sizes, k = SCENARIOS[scenario]

    def go():
        model, loader, optimizer = build(ctx.device, sizes, opt_name)
        step_grads = record_steps(optimizer, model)
        for i in range(0, len(loader), k):
            group = loader[i:i + k]
            x = torch.cat([b[0] for b in group])
            y = torch.cat([b[1] for b in group])
            optimizer.zero_grad()
            F.mse_loss(model(x), y).backward()
            if clip is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
        return Run(len(step_grads), [], step_grads, [], model, [])

    return ctx.cached(("truth", scenario, opt_name, clip), go)


def groups_text(scenario) -> str:
    sizes, k = SCENARIOS[scenario]
    groups = [sizes[i:i + k] for i in range(0, len(sizes), k)]
    return f"{len(sizes)} micro-batches of sizes {sizes}, accum_steps={k}: groups " + \
        " | ".join(f"{g} ({sum(g)} samples)" for g in groups)


def flat(grads) -> torch.Tensor:
    return torch.cat([g.reshape(-1).float() for g in grads])


ADVICE = {**accumulation.ADVICE, **{name: accumulation.REMAINDER_ADVICE for name in REMAINDERS}}


def compare_to_big_batch(ctx, scenario, opt_name, clip=None):
    r, t = solution_run(ctx, scenario, opt_name, clip), truth_run(ctx, scenario, opt_name, clip)
    where = f"{opt_name}, {groups_text(scenario)}"
    advice = ADVICE[scenario] if clip is None else (
        f"with max_grad_norm={clip}, clip the group's whole accumulated gradient once, just before its step")
    if len(r.step_grads) != len(t.step_grads):
        fail(f"{where}: expected {len(t.step_grads)} optimizer steps (one per group), saw {len(r.step_grads)}")
    for j, (mine, truth) in enumerate(zip(r.step_grads, t.step_grads)):
        if any(g is None for g in mine):
            fail(f"{where}: at optimizer step {j + 1} some parameters had no gradient (.grad is None)")
        a, b = flat(mine), flat(truth)
        err = ((a - b).norm() / b.norm()).item()
        if not err <= GRAD_RTOL:
            ratio = (a.norm() / b.norm()).item()
            fail(f"{where}: the gradient used by optimizer step {j + 1} differs from the big-batch gradient "
                 f"of that group by {err:.3g} (relative; tolerance {GRAD_RTOL:.0e}); its norm is {ratio:.4g}x the "
                 f"expected {b.norm().item():.4g}; {advice}")
    diff, name = max_param_diff(r.model, t.model)
    if not diff <= PARAM_RTOL:
        fail(f"{where}: after training, parameters differ from one-big-batch-per-group training by {diff:.3g} "
             f"(relative, in {name}; tolerance {PARAM_RTOL:.0e})")


# -- the checks -------------------------------------------------------------------------------

@CHECKS.add("optimizer-steps", "One optimizer.step() per group, the trailing group included")
def optimizer_steps(ctx):
    for scenario in ("divisible", "trailing", "short-last", *REMAINDERS):
        sizes, k = SCENARIOS[scenario]
        expected = math.ceil(len(sizes) / k)
        r = solution_run(ctx, scenario, "SGD-momentum")
        steps = [e for e in r.events if e.kind == "opt.step"]
        if len(steps) < expected:
            extra = " (the trailing group was dropped?)" if len(steps) == len(sizes) // k and len(sizes) % k else ""
            fail(f"{groups_text(scenario)}: expected {expected} optimizer.step() calls, saw {len(steps)}{extra}")
        per_group, count = [], 0
        for e in r.events:
            if e.kind == "forward":
                count += 1
            elif e.kind == "opt.step":
                per_group.append(count)
                count = 0
        want = [min(k, len(sizes) - i) for i in range(0, len(sizes), k)]
        if len(r.forwards) == len(sizes) and per_group != want:
            split = (f"; the trailing group of {want[-1]} was split into {len(per_group) - len(want) + 1} steps"
                     if len(per_group) > len(want) and per_group[:len(want) - 1] == want[:-1] else "")
            fail(f"{groups_text(scenario)}: expected {want} micro-batch forwards before each step, saw "
                 f"{per_group}{split}")
        if len(steps) != expected:
            split = " (the trailing group was split into more than one step?)" if len(steps) > expected else ""
            fail(f"{groups_text(scenario)}: expected {expected} optimizer.step() calls, saw {len(steps)}{split}")


@CHECKS.add("returns-step-count", "Returns the number of optimizer steps taken")
def returns_step_count(ctx):
    for scenario in ("divisible", "trailing"):
        r = solution_run(ctx, scenario, "SGD-momentum")
        taken = sum(1 for e in r.events if e.kind == "opt.step")
        value = r.returned
        if isinstance(value, torch.Tensor) or isinstance(value, bool) or not isinstance(value, int):
            fail(f"{groups_text(scenario)}: expected an int (the optimizer steps taken), got "
                 f"{type(value).__name__} {value!r}")
        if value != taken:
            fail(f"{groups_text(scenario)}: you returned {value}, but optimizer.step() was called {taken} times; "
                 f"return the number of steps taken")
        happened((e for e in r.events if e.kind == "opt.step"), "optimizer.step()")


@CHECKS.add("divisible-matches-big-batch", "Equal groups: same parameters as one big batch per group (SGD-momentum, AdamW)")
def divisible(ctx):
    for opt_name in OPTIMIZERS:
        compare_to_big_batch(ctx, "divisible", opt_name)


@CHECKS.add("trailing-group", "A trailing, shorter group is stepped and weighted by its own size")
def trailing(ctx):
    for opt_name in OPTIMIZERS:
        compare_to_big_batch(ctx, "trailing", opt_name)
    for scenario in REMAINDERS:
        compare_to_big_batch(ctx, scenario, "SGD-momentum")


@CHECKS.add("short-last-micro-batch", "A smaller last micro-batch counts n_i / N, not 1 / accum_steps")
def short_last(ctx):
    for opt_name in OPTIMIZERS:
        compare_to_big_batch(ctx, "short-last", opt_name)


@CHECKS.add("no-zero-inside-group", "Gradients start each group at zero, are never zeroed inside one, and "
            "nothing is left in .grad at the end")
def no_zero_inside_group(ctx):
    scenario = "trailing"
    r = solution_run(ctx, scenario, "SGD-momentum")
    happened((e for e in r.events if e.kind == "backward"), "backward()")
    left = [g for g in r.grads_after if g is not None and bool(g.any())]
    problem = accumulation.zeroing_problem(r.events, len(left), max((g.abs().max().item() for g in left), default=0.0))
    if problem:
        fail(f"{groups_text(scenario)}: {problem}")


@CHECKS.add("one-micro-batch-at-a-time", "Each micro-batch gets its own forward and backward")
def one_at_a_time(ctx):
    scenario = "short-last"
    sizes, _ = SCENARIOS[scenario]
    r = solution_run(ctx, scenario, "SGD-momentum")
    # A prefix is enough here: a loop that misses micro-batches fails the step and parity checks.
    if not r.forwards or r.forwards != sizes[:len(r.forwards)]:
        fail(f"{groups_text(scenario)}: expected one model forward per micro-batch with batch sizes {sizes}, "
             f"saw {r.forwards}; accumulation saves memory only if each micro-batch runs on its own")
    kinds = [e.kind for e in r.events if e.kind in ("forward", "backward")]
    pairs = "".join("f" if k == "forward" else "b" for k in kinds)
    if pairs != "fb" * len(r.forwards):
        fail(f"{groups_text(scenario)}: expected forward, backward, forward, backward, ... "
             f"({len(r.forwards)} pairs), saw {pairs.count('f')} forwards and {pairs.count('b')} backward() calls "
             f"in the order '{pairs}'; call backward on each micro-batch's loss before the next forward, "
             f"so that only one micro-batch's graph is held in memory")


@CHECKS.add("clip-accumulated", "max_grad_norm clips the accumulated gradient once, just before each step")
def clip_accumulated(ctx):
    scenario = "trailing"
    r = solution_run(ctx, scenario, "SGD-momentum", CLIP)
    clips, steps, order = accumulation.clip_order_problem(r.events)
    if clips:
        if clips != steps:
            fail(f"max_grad_norm={CLIP}, {groups_text(scenario)}: clip_grad_norm_ ran {clips} times for "
                 f"{steps} optimizer steps; clip once per group, after its last backward()")
        if order:
            fail(f"max_grad_norm={CLIP}: {order}")
    else:
        for j, grads in enumerate(r.step_grads):
            norm = flat([g for g in grads if g is not None]).norm().item()
            if norm > CLIP * (1 + 1e-4):
                fail(f"max_grad_norm={CLIP} was given, but optimizer step {j + 1} used a gradient of total norm "
                     f"{norm:.4g}; clip with torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm) "
                     f"just before each step")
    compare_to_big_batch(ctx, scenario, "SGD-momentum", CLIP)
