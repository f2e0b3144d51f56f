"""Child side: what every debugging drill's checks share.

A drill hands the learner a whole training script with one real bug. The grader calls the script's
training function on a model, data and optimizer it builds itself, once with the learner's script
and once with the fixed reference, from the same seed, and records what each run did (`Trace`).
Three checks follow from the two traces, in this order:

- the drill's own symptom check: is the symptom gone (finite losses, memory that stays flat, ...)?
- `honest-fix`: a change that only hides the symptom is named for what it is: the learning rate
  set to zero or changed, `nan_to_num` on the loss or the gradients, steps skipped or fewer batches
  run, and whatever the drill says must stay (autocast, the GradScaler, clipping...).
- `matches-fixed-run`: the loss curve and the final weights equal the fixed run's within the
  drill's stated tolerance; gone symptoms are not enough, the training must be the right one.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from quizapp.checking import instrument
from quizapp.checking.harness import (
    EXACT,
    Checks,
    Context,
    Tol,
    cause_if,
    close_elements,
    consequence,
    fail,
    fmt,
    is_close,
    listed,
    mismatch,
    nothing_to_check,
    plain,
    scale_of,
)
from quizapp.checking.instrument import LOG, Event
from quizapp.words import plural

HONEST_TITLE = "The fix removes the cause, not the symptom (same steps, learning rate, data and set-up)"
# An optimizer setting read back from a run (a learning rate, Adam's eps, a clipping norm): the same
# Python float, but for the last bits that a scheduler's arithmetic may leave in it.
SETTING = Tol(rtol=1e-9, atol=1e-15)


@dataclass
class Trace:
    """What one run of a drill's training function did."""

    returned: object
    losses: list[float]            # the per-step losses it returned, as floats ([] if it returned none)
    lrs: list[list[float]]         # every param group's lr as each optimizer step used it
    steps: int                     # optimizer steps that ran (a GradScaler's skipped steps excluded)
    scaler_steps: int              # scaler.step() calls (taken or skipped)
    forwards: list[dict]           # per forward of the watched model: n, training, autocast(_dtype), out_dtype
    nan_to_num: int                # calls of torch.nan_to_num / Tensor.nan_to_num(_) during the run
    params: list[torch.Tensor]     # the final parameters (detached clones)
    names: list[str]               # their names
    buffers: dict[str, torch.Tensor] = field(default_factory=dict)  # final buffers (BatchNorm statistics...)
    events: list[Event] = field(default_factory=list)  # the instrument log of the run
    extra: dict = field(default_factory=dict)          # what a drill's own hooks recorded
    # every param group's settings (lr, momentum, eps, betas...) as each optimizer step used them
    settings: list[list[dict]] = field(default_factory=list)
    moved: bool = False  # some parameter's value changed during the run (whatever changed it)

    def of(self, *kinds: str) -> list[Event]:
        return [e for e in self.events if e.kind in kinds]


# -- running ---------------------------------------------------------------------------------

_NAN_TO_NUM = (
    (torch, "nan_to_num"),
    (torch.Tensor, "nan_to_num"),
    (torch.Tensor, "nan_to_num_"),
)


@contextlib.contextmanager
def counting_nan_to_num() -> Iterator[list[int]]:
    """Count every call of nan_to_num, the usual way to make a NaN disappear without fixing it."""
    calls = [0]
    saved = [(owner, name, getattr(owner, name)) for owner, name in _NAN_TO_NUM]

    def counted(real):
        def call(*args, **kwargs):
            calls[0] += 1
            return real(*args, **kwargs)

        return call

    for owner, name, real in saved:
        setattr(owner, name, counted(real))
    try:
        yield calls
    finally:
        for owner, name, real in saved:
            setattr(owner, name, real)


class _Float64Ops(TorchDispatchMode):
    """Counts the aten operations that produce a float64 tensor (forward and backward alike): seen at
    the dispatcher, however the computation was reached."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if any(isinstance(t, torch.Tensor) and t.dtype == torch.float64 for t in _flat(out)):
            self.count += 1
        return out


def _flat(value):
    return value if isinstance(value, (list, tuple)) else (value,)


@contextlib.contextmanager
def counting_float64(extra: dict) -> Iterator[None]:
    """While inside, count into extra["float64_ops"] the operations that compute in float64."""
    mode = _Float64Ops()
    try:
        with mode:
            yield
    finally:
        extra["float64_ops"] = mode.count


def keeps_float32() -> Keep:
    """The computation stays in the fixed script's precision: float64 only moves an underflow further
    out (exp underflows near -745 in float64, near -104 in float32); the stable form never forms it.
    Needs one_run to run inside `counting_float64`."""

    def problem(yours: Trace, fixed: Trace) -> str | None:
        mine, theirs = yours.extra.get("float64_ops", 0), fixed.extra.get("float64_ops", 0)
        if mine > theirs:
            return (f"{plural(mine, 'operation')} computed in float64 where the fixed script computes none: the same "
                    "formula in float64 only moves the underflow further out (exp(x) is 0 in float64 from about "
                    "x = -745, in float32 from about -104), so larger logits bring the NaN back; a form that never "
                    "builds the probability (log_softmax, logsumexp) is finite at any scale")
        return None

    return Keep("float32 computation", problem)


def run(ctx: Context, label: str, call: Callable[[], object], model: torch.nn.Module,
        optimizer: torch.optim.Optimizer, *, extra: dict | None = None) -> Trace:
    """Run `call()` (the training function, on `model` and `optimizer`) and record what it did.

    `label` names the inputs for an error the run raises. `extra` is a dict the drill's own hooks
    fill during the run; it comes back as `Trace.extra`.
    """
    LOG.reset(ctx.device.type)
    settings: list[list[dict]] = []
    # Read after the update, by a step post-hook registered before the learner's code runs: the learner's
    # own pre-hooks (which may change lr or eps for the update) have run by then, and a post-hook of
    # theirs (which may put the value back) runs only after this one.
    used = optimizer.register_step_post_hook(lambda *_: settings.append(group_settings(optimizer)))
    instrument.watch_optimizer(optimizer)
    forwards: list[dict] = []

    def on_forward(module, inputs, output):
        first = inputs[0] if inputs else None
        forwards.append({
            "n": int(first.shape[0]) if isinstance(first, torch.Tensor) and first.dim() else 0,
            "training": module.training,
            "autocast": instrument.autocast_on(),
            "autocast_dtype": torch.get_autocast_dtype(ctx.device.type),
            "out_dtype": output.dtype if isinstance(output, torch.Tensor) else None,
        })

    handle = model.register_forward_hook(on_forward)
    before = [p.detach().clone() for p in model.parameters()]
    try:
        with counting_nan_to_num() as calls, ctx.given(label):
            returned = call()
    finally:
        handle.remove()
        used.remove()
    returned = plain(returned)
    named = list(model.named_parameters())
    return Trace(
        returned=returned, losses=as_losses(returned), lrs=[[g["lr"] for g in step] for step in settings],
        settings=settings, moved=any(_changed(a, b) for a, b in zip(before, model.parameters())),
        steps=len(LOG.of("opt.step")), scaler_steps=len(LOG.of("scaler.step")), forwards=forwards,
        nan_to_num=calls[0], params=[p.detach().clone() for _, p in named], names=[n for n, _ in named],
        buffers={n: b.detach().clone() for n, b in model.named_buffers()},
        events=list(LOG.events), extra=extra if extra is not None else {},
    )


def _changed(before: torch.Tensor, after: torch.Tensor) -> bool:
    after = after.detach()
    if after.shape != before.shape:
        return True
    return not torch.equal(before.to(after.dtype), after)


def group_settings(optimizer: torch.optim.Optimizer) -> list[dict]:
    """Each param group's settings as plain values (a tensor lr as a float), its parameters left out."""
    def value(v):
        if isinstance(v, torch.Tensor) and v.numel() == 1:
            return float(v.detach().double().item())
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v

    return [{k: value(v) for k, v in group.items() if k != "params"} for group in optimizer.param_groups]


def both_runs(ctx: Context, one_run: Callable, yours: str, fixed: str) -> tuple[Trace, Trace]:
    """(your run, the fixed run), computed once per grade. The fixed run goes first, on the fixed script
    loaded anew: what the learner's code does to the definitions it is handed (patching
    `type(model).forward`, the fixed module's globals), at import or while it trains, reaches neither
    the fixed run's classes nor its result. `one_run(ctx, module, label)` builds from `ctx.reference`."""

    def go():
        fresh = fresh_fixed_script(ctx)
        handed = ctx.reference
        ctx.reference = fresh
        try:
            fixed_run = one_run(ctx, fresh, fixed)
        finally:
            ctx.reference = handed
        return one_run(ctx, ctx.solution, yours), fixed_run

    return ctx.cached("runs", go)


_FRESH_NAMES = itertools.count()


def fresh_fixed_script(ctx: Context):
    """The exercise's reference.py loaded again, as a module no other code holds."""
    name = f"quizapp_fixed_script_{next(_FRESH_NAMES)}"
    spec = importlib.util.spec_from_file_location(name, Path(ctx.exercise_dir) / "reference.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while a class is made
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def as_losses(value) -> list[float]:
    """A returned list of per-step losses as floats; anything else gives []."""
    if not isinstance(value, (list, tuple)):
        return []
    out = []
    for v in value:
        if isinstance(v, torch.Tensor) and v.numel() == 1:
            out.append(float(v.detach().double().item()))
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(float(v))
        else:
            return []
    return out


# -- describing a loss log -------------------------------------------------------------------

def first_bad(values: Sequence[float]) -> int | None:
    """Index of the first NaN or infinite value, or None."""
    return next((i for i, v in enumerate(values) if not math.isfinite(v)), None)


def loss_log(values: Sequence[float], around: int | None = None, width: int = 3, unit: str = "step") -> str:
    """A short loss log the way a colleague pastes it: the first steps, and the steps around `around`."""
    if not values:
        return "no losses"
    picks = list(range(min(width, len(values))))
    if around is not None:
        picks += list(range(max(0, around - width + 1), min(len(values), around + 2)))
    picks.append(len(values) - 1)
    picks = sorted(set(picks))
    parts, last = [], -1
    for i in picks:
        if last >= 0 and i > last + 1:
            parts.append("...")
        parts.append(f"{unit} {i}: {fmt(values[i])}")
        last = i
    return ", ".join(parts)


def nonfinite_params(trace: Trace) -> list[str]:
    return [n for n, p in zip(trace.names, trace.params) if not bool(torch.isfinite(p).all())]


def require_finite(yours: Trace, still: str) -> None:
    """The NaN drills' symptom check: every returned loss and every final weight is finite. `still`
    says why finite losses with NaN weights mean the bug is still there (the gradients' NaN)."""
    bad = first_bad(yours.losses)
    nan_params = nonfinite_params(yours)
    if bad is not None:
        fail(f"the symptom is still there: the loss is {yours.losses[bad]} at step {bad} "
             f"({loss_log(yours.losses, bad)})"
             + (f", and {len(nan_params)} parameter tensors hold NaN after training" if nan_params else ""))
    if nan_params:
        fail(f"every loss is finite, but after training {listed(nan_params)} hold NaN or inf: {still}")


# -- what a cosmetic fix changes --------------------------------------------------------------

@dataclass
class Keep:
    """Something the fixed script must still do; `problem(yours, fixed)` says how it was removed, or None."""

    name: str
    problem: Callable[[Trace, Trace], str | None]


def attempts(trace: Trace) -> int:
    """Steps the run tried to take: scaler.step() calls when it scales (a GradScaler skips some of them
    on purpose, and in a mixed-precision drill how many it skips can be the symptom), else steps taken."""
    return trace.scaler_steps or trace.steps


def cosmetic_problems(yours: Trace, fixed: Trace, keep: Sequence[Keep] = (), *, check_lr: bool = True) -> list[str]:
    """Every way the run differs from the fixed run's set-up, each named as what it hides. With
    `check_lr` off (a drill whose symptom is the learning rate itself, which its symptom check
    holds to the schedule), only a learning rate of zero throughout is named here."""
    idle = nothing_ran(yours, fixed)
    if idle:  # every other difference follows from it
        return [idle]
    problems = []
    if yours.nan_to_num and not fixed.nan_to_num:
        problems.append(f"nan_to_num was called {plural(yours.nan_to_num, 'time')}: it turns the NaN or inf into ordinary "
                        "numbers after they were made, it does not stop them being made")
    lr = lr_problem(yours, fixed, only_zero=not check_lr)
    if lr:
        problems.append(lr)
    batches_yours, batches_fixed = len(yours.forwards), len(fixed.forwards)
    if batches_yours < batches_fixed:
        problems.append(f"the model ran {plural(batches_yours, 'forward pass', 'forward passes')} where the fixed "
                        f"script runs {batches_fixed}: "
                        "running fewer batches, steps or passes changes what the script does instead of fixing it")
    if attempts(yours) == 0 and yours.moved and attempts(fixed):
        problems.append(replaced_optimizer(yours, fixed))
    elif attempts(yours) < attempts(fixed):
        problems.append(f"{plural(attempts(yours), 'optimizer step')} ran where the fixed script takes {attempts(fixed)}: a "
                        "skipped or removed step hides the symptom, it does not fix it")
    for k in keep:
        message = k.problem(yours, fixed)
        if message:
            problems.append(message)
    return problems


def replaced_optimizer(yours: Trace, fixed: Trace) -> str:
    """The optimizer the grader passed in never stepped, yet the weights moved: another one trained them."""
    dtypes = sorted({str(p.dtype).replace("torch.", "") for p in yours.params})
    fixed_dtypes = sorted({str(p.dtype).replace("torch.", "") for p in fixed.params})
    rounded = (f", and the weights end in {' and '.join(dtypes)} where the fixed script's are "
               f"{' and '.join(fixed_dtypes)} (copied out and rounded back each step?)") if dtypes != fixed_dtypes else ""
    return (f"the optimizer passed to your function never stepped, yet the weights changed: an optimizer of your "
            f"own trained them{rounded}. The grader's optimizer (its learning rate and settings) is the set-up to "
            f"keep; the fixed script takes {plural(attempts(fixed), 'step')} with it")


def nothing_ran(yours: Trace, fixed: Trace) -> str | None:
    """What a run that did nothing at all (no forward pass, no optimizer step) left out, or None."""
    if yours.forwards or attempts(yours) or not fixed.forwards:
        return None
    return (f"nothing ran: the training function returned without a forward pass or an optimizer step, where the "
            f"fixed script runs {plural(len(fixed.forwards), 'forward pass', 'forward passes')} and takes "
            f"{plural(attempts(fixed), 'optimizer step')}")


def lr_problem(yours: Trace, fixed: Trace, *, only_zero: bool = False) -> str | None:
    """The learning rate set to zero, or changed from the fixed script's, at the first step it differs."""
    flat_yours = [lr for step in yours.lrs for lr in step]
    if flat_yours and all(lr == 0 for lr in flat_yours) and any(lr for step in fixed.lrs for lr in step):
        return (f"the learning rate was 0 at all {len(yours.lrs)} steps: a model that does not move shows no "
                "symptom, but it does not learn either")
    if only_zero:
        return None
    for i, (a, b) in enumerate(zip(yours.lrs, fixed.lrs)):
        if len(a) != len(b) or any(not is_close(x, y, SETTING) for x, y in zip(a, b)):
            return (f"the learning rate at step {i} was {fmt(a[0] if len(a) == 1 else a)} where the fixed script uses "
                    f"{fmt(b[0] if len(b) == 1 else b)}: changing the learning rate moves the symptom, it does not "
                    "remove its cause")
    return None


def keeps_autocast(dtype: torch.dtype) -> Keep:
    """Every forward of the model runs under autocast in `dtype` (the feature that exposes the bug)."""
    name = str(dtype).replace("torch.", "")

    def problem(yours: Trace, fixed: Trace) -> str | None:
        off = [f for f in yours.forwards if not (f["autocast"] and f["autocast_dtype"] == dtype)]
        if yours.forwards and off:
            return (f"{len(off)} of {len(yours.forwards)} forward passes ran without autocast({name}): turning mixed "
                    "precision off hides the bug instead of fixing it; the fixed script still trains in it")
        return None

    return Keep(f"autocast({name})", problem)


def keeps_scaler() -> Keep:
    """An enabled GradScaler scales the loss and steps the optimizer, from the fixed script's initial
    scale: a disabled scaler (scale 1) or a smaller start avoids the overflows or the scaled gradients
    that expose a mixed-precision bug, so it hides the bug rather than fixing it."""

    def problem(yours: Trace, fixed: Trace) -> str | None:
        scaled, wanted = yours.of("scale"), fixed.of("scale")
        if not scaled or yours.scaler_steps < fixed.scaler_steps:
            return (f"the loss was scaled {plural(len(scaled), 'time')} and scaler.step ran {plural(yours.scaler_steps, 'time')}, where "
                    f"the fixed script scales and steps through one GradScaler {fixed.scaler_steps} times: without loss "
                    "scaling, small float16 gradients flush to zero; keep the scaler and fix the bug")
        first, want = scaled[0].info["scale"], wanted[0].info["scale"] if wanted else None
        if want is not None and first != want:
            return (f"the loss was multiplied by {whole(first)} at the first step where the fixed script's GradScaler "
                    f"starts at {whole(want)}: a disabled scaler, or a smaller initial scale, avoids the overflows and "
                    "the scaled gradients that expose the bug; it does not fix it")
        return None

    return Keep("GradScaler", problem)


def whole(x: float) -> str:
    """A loss scale as the learner sets it: 16777216, not 1.67772e+07."""
    return f"{x:.0f}" if math.isfinite(x) and float(x).is_integer() else fmt(x)


def no_added_clipping(why: str) -> Keep:
    """The fixed script never clips, so clipping added to the learner's is a cap on a symptom; `why`
    says what it caps, e.g. "the oversized gradient instead of giving it the right size"."""

    def problem(yours: Trace, fixed: Trace) -> str | None:
        clips = yours.of("clip")
        if clips and not fixed.of("clip"):
            return f"clip_grad_norm_ ran {plural(len(clips), 'time')} where the fixed script never clips: clipping caps {why}"
        return None

    return Keep("no added clipping", problem)


def keeps_clipping(max_norm: float) -> Keep:
    """clip_grad_norm_ runs with `max_norm` before every step, as in the fixed script."""

    def problem(yours: Trace, fixed: Trace) -> str | None:
        clips = [e for e in yours.of("clip") if is_close(e.info["max_norm"], max_norm, SETTING)]
        wanted = len(fixed.of("clip"))
        if len(clips) < wanted:
            return (f"clip_grad_norm_(..., {fmt(max_norm)}) ran {plural(len(clips), 'time')} where the fixed script clips "
                    f"{wanted} times: removing or loosening the clipping hides the bug; clip the right gradients")
        return None

    return Keep("gradient clipping", problem)


# -- the checks every drill registers ----------------------------------------------------------

@dataclass
class Tolerance:
    """How close the fixed run must be: relative to the fixed run's largest value, per loss and per tensor."""

    loss_rtol: float
    param_rtol: float
    why: str  # what was measured to choose it, shown in the statement and kept next to the numbers

    def describe(self) -> str:
        return f"losses within {self.loss_rtol:.0e} and weights within {self.param_rtol:.0e}, relative"

    @property
    def loss_tol(self) -> Tol:
        """The loss curve's bound: of the fixed run's largest loss, for every step alike."""
        return Tol(rtol=self.loss_rtol, of_largest=True)

    @property
    def param_tol(self) -> Tol:
        """Each weight or buffer tensor's bound: of that tensor's largest entry in the fixed run."""
        return Tol(rtol=self.param_rtol, of_largest=True)


def register(checks: Checks, *, runs: Callable[[Context], tuple[Trace, Trace]], symptom_id: str, symptom_title: str,
             symptom: Callable[[Context, Trace, Trace], None], tolerance: Tolerance, keep: Sequence[Keep] = (),
             compare: Callable[[Context, Trace, Trace], None] | None = None,
             advice: Callable[[Trace, Trace], str | None] | None = None, check_lr: bool = True,
             unit: str = "step") -> None:
    """Add the drill's three checks: its symptom, `honest-fix`, `matches-fixed-run`.

    `runs(ctx)` returns (yours, fixed), cached by the caller. `compare`, if given, runs after the
    loss curve and weights agree, for what else the fixed run must match (e.g. a teacher left alone).
    `advice(yours, fixed)`, if given, names a drill's own near-miss (an epsilon in a log, a clamp)
    when the training does not match; it is added to that failure's message. `check_lr=False` leaves
    the learning rate to the symptom check (see `cosmetic_problems`). `unit` is what each returned
    loss is one of ("step", or "epoch" for a per-epoch validation loss).
    """

    @checks.add(symptom_id, symptom_title)
    def symptom_check(ctx):
        yours, fixed = runs(ctx)
        if nothing_ran(yours, fixed):  # no symptom shows in a run that did nothing; honest-fix fails it
            nothing_to_check("the training function ran no forward pass and no optimizer step")
        symptom(ctx, yours, fixed)

    @checks.add("honest-fix", HONEST_TITLE)
    def honest(ctx):
        yours, fixed = runs(ctx)
        idle = nothing_ran(yours, fixed)
        if idle:
            fail(idle)
        problems = cosmetic_problems(yours, fixed, keep, check_lr=check_lr)
        if problems:
            fail("the change hides the symptom instead of removing its cause: " + "; ".join(problems))

    @checks.add("matches-fixed-run", f"The training matches the fixed script's ({tolerance.describe()})")
    def matches(ctx):
        yours, fixed = runs(ctx)
        plot(ctx, yours, fixed, unit)
        hidden = bool(cosmetic_problems(yours, fixed, keep, check_lr=check_lr))
        hint = advice(yours, fixed) if advice is not None else None
        with cause_if(hidden, consequence(HONEST_TITLE)), cause_if(bool(hint) and not hidden, hint or ""):
            same_training(yours, fixed, tolerance, unit)
            if compare is not None:
                compare(ctx, yours, fixed)


def plot(ctx: Context, yours: Trace, fixed: Trace, unit: str = "step") -> None:
    if yours.losses or fixed.losses:
        ctx.data["curves"] = {"title": f"loss per {unit}: yours against the fixed script's", "x": unit,
                              "series": {"yours": yours.losses, "fixed": fixed.losses}}


def same_training(yours: Trace, fixed: Trace, tol: Tolerance, unit: str = "step") -> None:
    """The loss curve (one loss per `unit`) and the final weights and buffers of the two runs agree within `tol`."""
    if not isinstance(yours.returned, (list, tuple)) or (yours.returned and not yours.losses):
        fail(f"the training function must return the list of per-{unit} losses (floats), as the script's does; "
             f"it returned {type(yours.returned).__name__}")
    if len(yours.losses) != len(fixed.losses):
        fail(f"the run returned {len(yours.losses)} losses where the fixed script returns {len(fixed.losses)} "
             f"(one per {unit})")
    # The first step that differs, not the worst: a curve is read from where it leaves the fixed one.
    curve = torch.tensor(fixed.losses, dtype=torch.float64)
    agree = close_elements(torch.tensor(yours.losses, dtype=torch.float64), curve, tol.loss_tol)
    for i, (a, b) in enumerate(zip(yours.losses, fixed.losses)):
        if not agree[i]:
            off = f" (difference {abs(a - b) / scale_of(curve):.2e} of the largest loss, tolerance " \
                  f"{tol.loss_rtol:.0e})" if math.isfinite(a) and math.isfinite(b) else ""
            fail(f"the loss at {unit} {i} is {fmt(a)} where the fixed script's is {fmt(b)}{off}; yours: "
                 f"{loss_log(yours.losses, i, unit=unit)}; fixed: {loss_log(fixed.losses, i, unit=unit)}")
    if len(yours.params) != len(fixed.params):
        fail(f"the model ends with {len(yours.params)} parameters where the fixed script's has {len(fixed.params)}")
    for name, a, b in zip(fixed.names, yours.params, fixed.params):
        if a.shape != b.shape:
            fail(f"{name} has shape {tuple(a.shape)} where the fixed script's has {tuple(b.shape)}")
        if a.dtype != b.dtype:
            fail(f"after training, {name} is {str(a.dtype).replace('torch.', '')} where the fixed script's is "
                 f"{str(b.dtype).replace('torch.', '')}: the weights are kept in another precision")
        problem = mismatch(a, b, tol.param_tol, against="the fixed script's")
        if problem:
            fail(f"after training, {name} should equal the fixed script's: {problem}: the run trains a different model")
    for name, b in fixed.buffers.items():
        a = yours.buffers.get(name)
        if a is None or a.shape != b.shape:
            continue  # a buffer the learner's model lacks is its parameters' business, named above
        if not b.is_floating_point():
            if not is_close(a, b, EXACT):
                fail(f"after training, the buffer {name} is {a.flatten()[:4].tolist()} where the fixed script's is "
                     f"{b.flatten()[:4].tolist()}: the model ran a different number of training forward passes")
            continue
        problem = mismatch(a, b, tol.param_tol, against="the fixed script's")
        if problem:
            fail(f"after training, the buffer {name} should equal the fixed script's: {problem}: running "
                 "statistics that other data or another mode moved")
