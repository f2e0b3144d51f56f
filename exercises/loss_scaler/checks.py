"""Behavioural checks for loss_scaler: feed the learner's DynamicLossScaler and the real
torch.amp.GradScaler the same gradients (with injected inf/NaN) and compare what each does.

The grader patches torch.amp.GradScaler with a recording subclass; it behaves as the real one."""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import torch

from quizapp.checking.harness import (
    EXACT,
    Checks,
    Required,
    Tol,
    close,
    fail,
    fmt,
    is_close,
    mismatch,
    nothing_to_check,
    plain,
)

# Scales here are powers of two (or exact multiples of them), so unscaling is exact and GradScaler's
# float32 scale equals a Python float one bit for bit; 1e-6 only allows for a learner keeping the
# scale in float32 as GradScaler does. No configuration comes near float32's top (2**128): there a
# float32 scale and a Python float one part ways, and either is a right answer.
RTOL = 1e-6
# The same bound for a parameter or a gradient of a clean step, of that tensor's largest entry.
PARAM_TOL = Tol(rtol=RTOL, of_largest=True)
INF, NAN = math.inf, math.nan
# Step -> value written into one gradient element after backward: inf, NaN, -inf, NaN in another param.
BAD = {2: (0, INF), 3: (1, NAN), 9: (0, -INF), 10: (1, NAN)}
STEPS = 15
# (init_scale, growth_interval, growth_factor, backoff_factor)
MAIN = (2.0**16, 3, 2.0, 0.5)
# The last one's backoff is not 1 / growth: a scaler that divides by growth_factor on overflow
# (ignoring backoff_factor) passes all the others.
CONFIGS = [MAIN, (8.0, 2, 2.0, 0.5), (1024.0, 1, 2.0, 0.5), (64.0, 4, 4.0, 0.25), (1024.0, 2, 2.0, 0.25)]
# Finite in float32 (max about 2**128), and the grown 2**1100 overflows float32 and float64 alike,
# so a scale stored either way must refuse to grow.
HUGE_SCALE, HUGE_GROWTH = 2.0**100, 2.0**1000
LR = 0.1

CHECKS = Checks(Required(
    "DynamicLossScaler",
    "(init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000)",
    sample_args=(), sample_kwargs={"init_scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                   "growth_interval": 3},
    is_class=True,
))


def bad_text(i: int) -> str:
    if i not in BAD:
        return "clean gradients"
    which, value = BAD[i]
    return f"an injected {value} in parameter {which}'s gradient"


@dataclass
class Run:
    scales: list          # the scale after each step
    returns: list         # what step() returned (learner only)
    stepped: list         # how many times optimizer.step() ran during each step
    before: list          # parameters before each step
    after: list           # parameters after each step


def make_params(ctx):
    g = torch.Generator().manual_seed(0)
    return [torch.randn(3, 4, generator=g).to(ctx.device).requires_grad_(),
            torch.randn(5, generator=g).to(ctx.device).requires_grad_()]


def coefficients(ctx, i: int):
    g = torch.Generator().manual_seed(100 + i)
    return [torch.randn(3, 4, generator=g).to(ctx.device), torch.randn(5, generator=g).to(ctx.device)]


def counting(optimizer) -> list:
    calls = [0]
    real = optimizer.step

    def step(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    optimizer.step = step
    return calls


def trajectory(ctx, who: str, cfg) -> Run:
    """STEPS iterations of a linear loss sum(c_i * p): its gradient is c_i whatever the parameters
    hold, so both scalers see exactly the same gradient sequence."""
    init_scale, interval, growth, backoff = cfg

    def go():
        with ctx.given(cfg_text(cfg)):
            return steps()

    def steps():
        params = make_params(ctx)
        optimizer = torch.optim.SGD(params, lr=LR)
        calls = counting(optimizer)
        if who == "gradscaler":
            scaler = torch.amp.GradScaler(ctx.device.type, init_scale=init_scale, growth_factor=growth,
                                          backoff_factor=backoff, growth_interval=interval)
        else:
            impl = ctx.solution if who == "solution" else ctx.reference
            scaler = impl.DynamicLossScaler(init_scale=init_scale, growth_factor=growth, backoff_factor=backoff,
                                            growth_interval=interval)
        run = Run([], [], [], [], [])
        for i in range(STEPS):
            optimizer.zero_grad(set_to_none=True)
            loss = sum((p * c).sum() for p, c in zip(params, coefficients(ctx, i)))
            scaled = scaler.scale(loss) if who == "gradscaler" else scaler.scale_loss(loss)
            scaled.backward()
            if i in BAD:
                which, value = BAD[i]
                with torch.no_grad():
                    params[which].grad.view(-1)[0] = value
            run.before.append([p.detach().clone() for p in params])
            n = calls[0]
            if who == "gradscaler":
                scaler.step(optimizer)
                scaler.update()
                run.scales.append(float(scaler.get_scale()))
            else:
                run.returns.append(scaler.step(optimizer))
                run.scales.append(float(scaler.scale))
            run.stepped.append(calls[0] - n)
            run.after.append([p.detach().clone() for p in params])
        return run

    return ctx.cached((who, cfg), go)


def cfg_text(cfg) -> str:
    init_scale, interval, growth, backoff = cfg
    return (f"DynamicLossScaler(init_scale={fmt(init_scale)}, growth_factor={fmt(growth)}, "
            f"backoff_factor={fmt(backoff)}, growth_interval={interval})")


# -- the checks -------------------------------------------------------------------------------

@CHECKS.add("scale-trajectory", "The scale after every step equals torch.amp.GradScaler's")
def scale_trajectory(ctx):
    yours, oracle = trajectory(ctx, "solution", MAIN).scales, trajectory(ctx, "gradscaler", MAIN).scales
    ctx.data["curves"] = {"title": "log2(scale) after each step", "x": "step",
                          "series": {"yours": [math.log2(s) if s > 0 and math.isfinite(s) else math.nan for s in yours],
                                     "GradScaler": [math.log2(s) for s in oracle]}}
    for cfg in CONFIGS:
        yours = trajectory(ctx, "solution", cfg).scales
        oracle = trajectory(ctx, "gradscaler", cfg).scales
        for i, (e, s) in enumerate(zip(oracle, yours)):
            if not close(s, e, RTOL):
                prev = oracle[i - 1] if i else cfg[0]
                fail(f"{cfg_text(cfg)}: at step {i} ({bad_text(i)}, scale before it {fmt(prev)}) GradScaler's scale "
                     f"became {fmt(e)}, yours {fmt(s)}. Scales so far, GradScaler: {fmt(oracle[:i + 1])}; "
                     f"yours: {fmt(yours[:i + 1])}")


@CHECKS.add("skip-on-overflow", "A step with inf or NaN gradients changes no parameter and never calls optimizer.step")
def skip_on_overflow(ctx):
    run = trajectory(ctx, "solution", MAIN)
    for i in range(STEPS):
        if i in BAD:
            if run.stepped[i]:
                fail(f"{cfg_text(MAIN)}: step {i} had {bad_text(i)}, yet optimizer.step() was called "
                     f"{run.stepped[i]} time{'s' if run.stepped[i] != 1 else ''}; skip the step when any gradient "
                     "is inf or NaN (torch.isfinite catches inf, -inf and NaN)")
            changed = [(a, b) for a, b in zip(run.after[i], run.before[i]) if not is_close(a, b, EXACT)]
            if changed:
                moved = max((a - b).abs().max().item() if torch.isfinite(a).all() else math.inf for a, b in changed)
                fail(f"{cfg_text(MAIN)}: step {i} had {bad_text(i)}, yet parameters changed (max change {fmt(moved)}); "
                     "a skipped step must leave them as they were")
        elif run.stepped[i] != 1:
            fail(f"{cfg_text(MAIN)}: step {i} had clean gradients, and optimizer.step() was called {run.stepped[i]} "
                 f"time{'s' if run.stepped[i] != 1 else ''}; expected exactly once")


@CHECKS.add("return-value", "step() returns True when it stepped and False when it skipped")
def return_value(ctx):
    run = trajectory(ctx, "solution", MAIN)
    expected = [i not in BAD for i in range(STEPS)]
    for i, (e, r) in enumerate(zip(expected, run.returns)):
        if not isinstance(r, bool):
            fail(f"step {i}: step() returned {r!r} ({type(r).__name__}); expected the bool {e}")
        if r is not e:
            fail(f"step {i} ({bad_text(i)}): step() returned {r}, expected {e} (True means optimizer.step() ran). "
                 f"All returns: {run.returns}, expected {expected}")


def plain_sgd_run(ctx, impl, n_steps, init_scale, interval):
    """A small regression model trained n_steps with SGD+momentum, through the scaler (impl) or plain."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).to(ctx.device)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(16, 4, generator=g).to(ctx.device), torch.randn(16, 1, generator=g).to(ctx.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    scaler = impl.DynamicLossScaler(init_scale=init_scale, growth_interval=interval) if impl else None
    with contextlib.ExitStack() as stack:
        if impl:
            stack.enter_context(ctx.given(cfg_text((init_scale, interval, 2.0, 0.5))))
        sgd_steps(model, x, y, optimizer, scaler, n_steps)
    return model, [None if p.grad is None else p.grad.detach().clone() for p in model.parameters()]


def sgd_steps(model, x, y, optimizer, scaler, n_steps):
    for _ in range(n_steps):
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        if scaler is None:
            loss.backward()
            optimizer.step()
        else:
            scaler.scale_loss(loss).backward()
            scaler.step(optimizer)


@CHECKS.add("clean-step-update", "Clean steps update parameters exactly as an unscaled step would")
def clean_step_update(ctx):
    init_scale, interval, n = 2.0**16, 2, 5  # the scale grows twice during the run
    start, _ = plain_sgd_run(ctx, None, 0, 1.0, 1)
    mine, mine_grads = plain_sgd_run(ctx, ctx.solution, n, init_scale, interval)
    plain, plain_grads = plain_sgd_run(ctx, None, n, 1.0, 1)
    what = f"{n} clean steps of SGD (lr {LR}, momentum 0.9) with {cfg_text((init_scale, interval, 2.0, 0.5))}"
    for (name, a), b, s in zip(mine.named_parameters(), plain.parameters(), start.parameters()):
        problem = mismatch(a, b, PARAM_TOL, against="the unscaled run")
        if problem:
            moved_mine = (a - s).abs().max().item()
            moved_plain = (b - s).abs().max().item() or 1e-30
            fail(f"{what}: parameter {name} should equal an unscaled run's: {problem}; your run moved it by "
                 f"{fmt(moved_mine)}, the unscaled run by {fmt(moved_plain)} (ratio {fmt(moved_mine / moved_plain)}). "
                 "The optimizer must see gradients divided by the scale")
    for (name, _), a, b in zip(mine.named_parameters(), mine_grads, plain_grads):
        if not is_close(a, b, PARAM_TOL):
            ratio = (a.abs().max() / b.abs().max().clamp_min(1e-30)).item()
            fail(f"{what}: after step(), {name}.grad is {fmt(ratio)} times the true gradient; step() must unscale "
                 "the gradients in place (p.grad divided by the scale)")


@CHECKS.add("missing-grads", "Parameters without a gradient are skipped")
def missing_grads(ctx):
    used = torch.ones(3, device=ctx.device, requires_grad=True)
    unused = torch.ones(2, device=ctx.device, requires_grad=True)  # .grad stays None
    frozen = torch.ones(2, device=ctx.device, requires_grad=True)
    optimizer = torch.optim.SGD([{"params": [used, unused]}, {"params": [frozen]}], lr=LR)
    calls = counting(optimizer)
    with ctx.given("DynamicLossScaler(init_scale=8.0, growth_interval=100)"):
        scaler = ctx.solution.DynamicLossScaler(init_scale=8.0, growth_interval=100)
        scaler.scale_loss((used * 2.0).sum()).backward()
    try:
        result = scaler.step(optimizer)
    except Exception as exc:  # noqa: BLE001 - the crash is the finding
        fail(f"with 2 of 3 parameters having .grad None, step() raised {type(exc).__name__}: {exc}; "
             "skip parameters whose .grad is None")
    if calls[0] != 1:
        fail(f"clean gradients (two of three parameters without a gradient): expected optimizer.step() to run once, "
             f"it ran {calls[0]} time{'s' if calls[0] != 1 else ''} (step() returned {result!r})")
    if unused.grad is not None or frozen.grad is not None:
        fail("step() gave a gradient to a parameter that had none; leave .grad None where it is None")
    if used[0].item() == 1.0:
        fail("the parameter with a gradient did not move (still 1.0) although the step was clean")


@CHECKS.add("growth-only-if-finite", "The scale grows only if the grown scale is finite")
def growth_only_if_finite(ctx):
    what = cfg_text((HUGE_SCALE, 1, HUGE_GROWTH, 0.5))
    with ctx.given(what):
        scaler = ctx.solution.DynamicLossScaler(init_scale=HUGE_SCALE, growth_factor=HUGE_GROWTH, growth_interval=1)
        p = torch.ones(2, device=ctx.device, requires_grad=True)
        optimizer = torch.optim.SGD([p], lr=LR)
        seen = []
        for _ in range(2):
            optimizer.zero_grad(set_to_none=True)
            scaler.scale_loss((p * 0.0).sum()).backward()  # zero gradients: a clean step that moves nothing
            scaler.step(optimizer)
            seen.append(float(scaler.scale))
    if seen != [HUGE_SCALE, HUGE_SCALE]:
        fail(f"{what}: after each of two clean steps the grown scale 2**1100 is inf (in float32 and float64 alike), "
             f"so the scale must stay {fmt(HUGE_SCALE)} (2**100); got {fmt(seen)}")
    if not ever_grows(ctx):  # a scale that never grows stays finite for no merit
        nothing_to_check(f"your scale never grew in {len(CONFIGS)} runs of {STEPS} steps, so there was no growth to "
                         "hold back")


def ever_grows(ctx) -> bool:
    """Whether the solution's scale grew at some step of the trajectories (True when a run raised:
    that error is the trajectory checks' to report)."""
    try:
        runs = [(cfg[0], trajectory(ctx, "solution", cfg).scales) for cfg in CONFIGS]
    except Exception:  # noqa: BLE001 - see above
        return True
    return any(b > a for start, scales in runs for a, b in zip([start, *scales], scales))


@CHECKS.add("scale-loss", "scale_loss returns loss * scale, a tensor of the loss's own shape and dtype")
def scale_loss(ctx):
    init_scale = 1024.0
    p = torch.full((3,), 0.5, device=ctx.device, requires_grad=True)
    loss = (p * 2.0).sum()  # a 0-dim float32 loss of 3.0, as a mean loss would be
    with ctx.given(f"DynamicLossScaler(init_scale={fmt(init_scale)}) and a 0-dim float32 loss of 3.0"):
        out = plain(ctx.solution.DynamicLossScaler(init_scale=init_scale).scale_loss(loss))
    what = f"scale_loss(loss) with init_scale={fmt(init_scale)} and a 0-dim float32 loss of 3.0"
    if not isinstance(out, torch.Tensor):
        fail(f"{what} returned {type(out).__name__}; expected the tensor loss * scale, so that backward() can run on it")
    if tuple(out.shape) != tuple(loss.shape):
        fail(f"{what} returned a tensor of shape {list(out.shape)}; expected the loss's own shape {list(loss.shape)} "
             "(a 0-dim tensor): multiply by the scale as a Python float or a 0-dim tensor, not a shape-[1] one, "
             "or every loss after it stops being a scalar")
    if out.dtype != loss.dtype:
        fail(f"{what} returned {out.dtype}; expected the loss's dtype {loss.dtype}")
    if not out.requires_grad:
        fail(f"{what} returned a tensor cut off from the graph (requires_grad=False); backward() on it would "
             "reach no parameter")
    if out.item() != 3.0 * init_scale:
        fail(f"{what} returned {fmt(out.item())}; expected 3.0 * {fmt(init_scale)} = {fmt(3.0 * init_scale)}")
