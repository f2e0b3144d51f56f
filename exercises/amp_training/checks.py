"""Behavioural checks for amp_training: run the learner's loop and the reference on identical
models and data, watch both through the grader's instrumentation, and compare."""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from quizapp.checking import instrument
from quizapp.checking.harness import (
    EXACT,
    Checks,
    Required,
    Tol,
    branches_on_device,
    cause_if,
    consequence,
    expect_sequence_close,
    fail,
    fmt,
    happened,
    is_close,
    max_param_diff,
    nothing_to_check,
    rel_diff,
)
from quizapp.checking.instrument import LOG
from quizapp.checking.instrument import split_iterations as iterations

EPOCHS = 3
# 5 batches of 16 and a short last one of 8: an epoch value weighted by batch size (a per-sample
# mean) then differs from the contract's mean of the iterations' losses.
SAMPLES, BATCH = 88, 16
# Same model, data, seeds and op order give the same numbers bit for bit; 1e-4 leaves room for
# summing the epoch mean another way and for CUDA's nondeterministic reductions, while the
# smallest real bug (one skipped step, the last loss for the mean) moves them by more than 1e-2.
PARITY_RTOL = 1e-4
# Low-precision compute vs a float32 run of the same loop: measured 0.1 % apart on CPU; 5 % is
# far outside rounding noise yet catches a loop that skips or distorts updates.
FP32_RTOL = 0.05
CLIP = 0.05  # small enough that clipping acts on every step of this problem
INJECT_AT = 2

CHECKS = Checks(Required(
    "train_with_amp",
    "(model, loader, optimizer, loss_fn, epochs, *, device, amp_dtype=torch.float16, max_grad_norm=None) -> list[float]",
    sample_args=(None, None, None, None, 1), sample_kwargs={"device": None, "amp_dtype": None, "max_grad_norm": None},
))


def build(device: torch.device, seed: int = 0):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)).to(device)
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(SAMPLES, 16, generator=g)
    # Small targets keep gradients inside float16's range at GradScaler's default scale, so the
    # only skipped step is the one a check injects.
    y = torch.tanh(x @ torch.randn(16, 4, generator=g)) * 0.25
    loader = [(x[i:i + BATCH], y[i:i + BATCH]) for i in range(0, len(x), BATCH)]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return model, loader, optimizer


@dataclass
class Run:
    losses: object
    events: list
    scalers: list
    params: list
    param_dtypes: list
    model: torch.nn.Module


def run(ctx, impl, dtype, *, clip=None, inject_at=None) -> Run:
    def go():
        LOG.reset(ctx.device.type)
        model, loader, optimizer = build(ctx.device)
        instrument.watch_optimizer(optimizer)
        hooks = instrument.watch_forward(model)
        LOG.watched_params = list(model.parameters())
        if inject_at is not None:
            instrument.inject_inf(model[0].weight, inject_at)
        given = (f"amp_dtype={dtype}, max_grad_norm={clip}, device={ctx.device.type}"
                 + (f", an inf gradient injected at iteration {inject_at}" if inject_at is not None else ""))
        try:
            with ctx.given(given):
                losses = impl.train_with_amp(model, loader, optimizer, F.mse_loss, EPOCHS, device=ctx.device,
                                             amp_dtype=dtype, max_grad_norm=clip)
        except Exception as exc:
            # What the loop did before it raised, kept with the error: a cached run re-raises it later,
            # when LOG holds another run's events.
            with contextlib.suppress(Exception):
                exc.amp_events = list(LOG.events)
            raise
        finally:
            for h in hooks:
                h.remove()
        return Run(losses, list(LOG.events), list(LOG.scalers), [p.detach().clone() for p in model.parameters()],
                   [p.dtype for p in model.parameters()], model)

    name = "solution" if impl is ctx.solution else "reference"
    return ctx.cached((name, dtype, clip, inject_at), go)


# GradScaler refuses some misuse with terse errors; say what the loop did wrong instead.
SCALER_ERRORS = {
    "has already been called since the last update": "scaler.step() (or unscale_) ran twice with no "
        "scaler.update() in between: call scaler.update() once per iteration, after scaler.step()",
    "_scale is None": "scaler.step() ran but scaler.scale() never did: run backward on scaler.scale(loss)",
    "Attempting to unscale FP16 gradients": "the gradients are float16 because the parameters are: keep the "
        "model float32 (master weights) and let autocast cast per op",
    "No inf checks were recorded": "scaler.step() found no gradients: were they zeroed (set to None) between "
        "backward and step?",
}


def no_inf_checks_cause(events) -> str | None:
    """Why scaler.update() found no inf checks, read from what the loop did before it; None when the
    loop stepped through the scaler (then the gradients were gone by the time scaler.step ran)."""
    if any(e.kind == "scaler.step" for e in events):
        return None
    direct = sum(1 for e in events if e.kind == "opt.step" and not e.info["via_scaler"])
    if direct:
        times = f"{direct} time{'s' if direct != 1 else ''}"
        return (f"optimizer.step() was called directly ({times} before scaler.update() failed) beside "
                "a GradScaler, so scaler.step(optimizer) never ran and scaler.update() had no inf check to act "
                "on; call scaler.step(optimizer) in its place: it unscales the gradients, skips the step when "
                "one is inf/NaN, and records what update() needs")
    return ("scaler.update() ran, but neither scaler.step(optimizer) nor optimizer.step() did before it; call "
            "scaler.step(optimizer) once per iteration, then scaler.update()")


def mine(ctx, dtype=torch.float16, **kw) -> Run:
    try:
        return run(ctx, ctx.solution, dtype, **kw)
    except (RuntimeError, AssertionError, ValueError) as exc:
        torch_said = f"(torch said: {str(exc).splitlines()[0][:160]})"
        events = getattr(exc, "amp_events", None)
        if "No inf checks were recorded" in str(exc) and events and (cause := no_inf_checks_cause(events)):
            fail(f"{cause} {torch_said}")
        for needle, explanation in SCALER_ERRORS.items():
            if needle in str(exc):
                fail(f"{explanation} {torch_said}")
        raise


def ref(ctx, dtype=torch.float16, **kw) -> Run:
    return run(ctx, ctx.reference, dtype, **kw)


def float32_losses(ctx) -> list[float]:
    def go():
        model, loader, optimizer = build(ctx.device)
        out = []
        for _ in range(EPOCHS):
            total = 0.0
            for x, y in loader:
                optimizer.zero_grad()
                loss = F.mse_loss(model(x.to(ctx.device)), y.to(ctx.device))
                loss.backward()
                optimizer.step()
                total += loss.item()
            out.append(total / len(loader))
        return out

    return ctx.cached("float32", go)


def as_floats(losses) -> list[float]:
    if not isinstance(losses, (list, tuple)):
        fail(f"expected a list of {EPOCHS} floats (one per epoch), got {type(losses).__name__}")
    out = []
    for i, v in enumerate(losses):
        if isinstance(v, torch.Tensor):
            fail(f"epoch {i}: got a tensor; return Python floats (loss.item()), so no graph or device memory is kept")
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            fail(f"epoch {i}: expected a float, got {type(v).__name__}")
        out.append(float(v))
    return out


def batch_sizes() -> list[int]:
    return [min(BATCH, SAMPLES - i) for i in range(0, SAMPLES, BATCH)]


def iteration_losses(r: Run) -> list[float]:
    """Each iteration's unscaled loss, read from what reached backward()."""
    out, scale = [], 1.0
    for e in r.events:
        if e.kind == "scale":
            scale = e.info["scale"]
        elif e.kind == "backward":
            out.append(e.info["value"] / scale)
            scale = 1.0
    return out


def no_loss_scaling(r: Run) -> str | None:
    """Why a float16 run had no loss scaling at all, or None."""
    if not r.scalers:
        return "no GradScaler was created"
    if not any(s.is_enabled() for s in r.scalers):
        return "the GradScaler was disabled (enabled=False, or a CUDA-only scaler on the CPU)"
    return None


def outside_autocast(r: Run) -> bool:
    return any(not e.info["autocast"] for e in r.events if e.kind == "forward")


def forwards(r: Run) -> list[dict]:
    return [e.info for e in r.events if e.kind == "forward"]


NEVER_RAN = "the loop never ran: no forward, no backward and no optimizer step"


def idle(r: Run) -> bool:
    """Whether the loop did nothing at all that the instruments see."""
    return not any(e.kind in ("forward", "backward", "opt.step") for e in r.events)


def skip_if_idle(r: Run) -> None:
    """Skip a check of what the loop does when it did nothing: no subject, no verdict. A loop that did
    something the check cannot see keeps the check's own failure (a forward that bypassed the model)."""
    if idle(r):
        nothing_to_check(NEVER_RAN)


def ran_iterations(r: Run) -> list[list]:
    """The run's iterations (one per backward); a check of each iteration is skipped when there is none
    (the backward check fails a loop that ran but never called backward())."""
    its = iterations(r.events)
    if not its:
        skip_if_idle(r)
    return happened(its, "backward()")


CUDA_GATE = ("your loop turns autocast/the scaler off when the device is not CUDA; this grade ran on CPU, where "
             "float16 autocast and GradScaler(\"cpu\") work too (see `quizapp grade --device`)")


def cuda_gate(ctx) -> str | None:
    """The one-line note for a loop that gates AMP on CUDA and so ran without it here, or None."""
    if ctx.device.type == "cuda":
        return None
    r = mine(ctx)
    if not (outside_autocast(r) or no_loss_scaling(r)):
        return None
    return CUDA_GATE if branches_on_device(ctx.solution) else None


def fail_gated(ctx, message: str):
    """Fail with message, led by the CUDA-gate note when that is why."""
    note = cuda_gate(ctx)
    if note:
        ctx.data["note"] = note
        fail(f"{note}. {message[:1].upper()}{message[1:]}")
    fail(message)


GRAD_SCALER_TITLE = "float16: one enabled GradScaler for the whole run"
AUTOCAST_TITLE = "Forward runs under autocast with the requested dtype"




# -- the checks -------------------------------------------------------------------------------

@CHECKS.add("returns-losses", "Runs and returns one finite float per epoch")
def returns_losses(ctx):
    losses = as_floats(mine(ctx).losses)
    if len(losses) != EPOCHS:
        fail(f"expected {EPOCHS} values (epochs={EPOCHS}), got {len(losses)}")
    bad = [i for i, v in enumerate(losses) if not math.isfinite(v)]
    if bad:
        fail(f"epoch {bad[0]} loss is {losses[bad[0]]}: losses must stay finite")
    skip_if_idle(mine(ctx))


def parity(ctx, dtype, label):
    yours = as_floats(mine(ctx, dtype).losses)
    reference = as_floats(ref(ctx, dtype).losses)
    ctx.data["curves"] = {"title": f"Loss per epoch ({label})",
                          "series": {"yours": yours, "reference": reference, "float32": float32_losses(ctx)}}
    per_iter = iteration_losses(ref(ctx, dtype))
    n = len(per_iter) // EPOCHS if per_iter else 0
    last = [per_iter[(i + 1) * n - 1] for i in range(EPOCHS)] if n else []
    sizes = batch_sizes()
    weighted = ([sum(v * w for v, w in zip(per_iter[i * n:(i + 1) * n], sizes)) / sum(sizes) for i in range(EPOCHS)]
                if n == len(sizes) else [])

    def matches(values):
        return (values and len(yours) == EPOCHS and all(is_close(a, b, Tol(rtol=1e-6, atol=1e-6)) for a, b in zip(yours, values))
                and any(rel_diff(a, b) > PARITY_RTOL for a, b in zip(values, reference)))

    if matches(last):
        fail(f"your values {fmt(yours)} are each epoch's last iteration loss; return the mean over the "
             f"epoch's {n} iterations: {fmt(reference)}")
    if matches(weighted):
        fail(f"your values {fmt(yours)} weight each iteration's loss by its batch size (the batches hold {sizes} "
             f"samples); return the plain mean of the epoch's {n} iteration losses: {fmt(reference)}")
    with cause_if(outside_autocast(mine(ctx, dtype)), f"{consequence(AUTOCAST_TITLE)}: the forward ran outside autocast"), \
            cause_if(idle(mine(ctx, dtype)), NEVER_RAN):
        expect_sequence_close(f"epoch loss with amp_dtype={label}", reference, yours, PARITY_RTOL)


@CHECKS.add("loss-parity-fp16", "Epoch losses match the reference (float16)")
def loss_parity_fp16(ctx):
    parity(ctx, torch.float16, "float16")


@CHECKS.add("loss-parity-bf16", "Epoch losses match the reference (bfloat16)")
def loss_parity_bf16(ctx):
    parity(ctx, torch.bfloat16, "bfloat16")


@CHECKS.add("close-to-fp32", "Final loss is within 5% of a float32 run")
def close_to_fp32(ctx):
    base = float32_losses(ctx)[-1]
    for dtype, label in ((torch.float16, "float16"), (torch.bfloat16, "bfloat16")):
        final = as_floats(mine(ctx, dtype).losses)[-1]
        if not (math.isfinite(final) and rel_diff(final, base) <= FP32_RTOL):
            why = f"; {NEVER_RAN}" if idle(mine(ctx, dtype)) else ""
            fail(f"{label}: final epoch loss {fmt(final)} vs float32 {fmt(base)} "
                 f"({rel_diff(final, base):.1%} apart; at most {FP32_RTOL:.0%} expected){why}")


@CHECKS.add("autocast-forward", AUTOCAST_TITLE)
def autocast_forward(ctx):
    for dtype in (torch.float16, torch.bfloat16):
        seen = forwards(mine(ctx, dtype))
        if not seen:
            skip_if_idle(mine(ctx, dtype))
            fail(f"amp_dtype={dtype}: the model's forward never ran")
        off = sum(1 for f in seen if not f["autocast"])
        if off:
            fail_gated(ctx, f"amp_dtype={dtype}: {off} of {len(seen)} Linear forwards ran outside autocast; wrap forward "
                 f"and loss in torch.autocast(device_type=device.type, dtype=amp_dtype)")
        wrong = [f for f in seen if f["autocast_dtype"] != dtype or f["out_dtype"] != dtype]
        if wrong:
            f = wrong[0]
            fail(f"amp_dtype={dtype} requested, but autocast ran in {f['autocast_dtype']} and Linear outputs were "
                 f"{f['out_dtype']}: pass dtype=amp_dtype to torch.autocast")


@CHECKS.add("backward-outside-autocast", "Backward runs outside autocast")
def backward_outside(ctx):
    backs = [e.info for e in mine(ctx).events if e.kind == "backward"]
    if not backs:
        skip_if_idle(mine(ctx))
        fail("backward() was never called")
    inside = sum(1 for b in backs if b["autocast"])
    if inside:
        fail(f"{inside} of {len(backs)} backward() calls ran inside autocast; leave the `with torch.autocast(...)` "
             "block before calling backward")


@CHECKS.add("master-weights-fp32", "Parameters stay float32 (master weights)")
def master_weights(ctx):
    # bfloat16 first: a float16 model already breaks GradScaler ("Attempting to unscale FP16
    # gradients"), which would hide this check's own, clearer message.
    for dtype in (torch.bfloat16, torch.float16):
        wrong = [d for d in mine(ctx, dtype).param_dtypes if d != torch.float32]
        if wrong:
            fail(f"amp_dtype={dtype}: {len(wrong)} parameters ended as {wrong[0]}; keep the model float32 "
                 "(no model.half()/.to(dtype)) and let autocast cast per op")
    # Parameters no step touched are float32 only because nothing changed them.
    skip_if_idle(mine(ctx))
    happened((e for dtype in (torch.bfloat16, torch.float16) for e in mine(ctx, dtype).events if e.kind == "opt.step"),
             "optimizer.step()")


@CHECKS.add("grad-scaler", GRAD_SCALER_TITLE)
def grad_scaler(ctx):
    r = mine(ctx)
    skip_if_idle(r)
    if not r.scalers:
        fail_gated(ctx, "no GradScaler was created: float16 gradients underflow without loss scaling; create "
             "torch.amp.GradScaler(device.type) once, before the loop")
    if len(r.scalers) > 1:
        fail(f"{len(r.scalers)} GradScalers were created; create one before the loop so its scale and "
             "growth count carry across iterations")
    scaler = r.scalers[0]
    if not scaler.is_enabled():
        extra = (" (torch.cuda.amp.GradScaler is deprecated and CUDA-only: use torch.amp.GradScaler(device.type))"
                 if isinstance(scaler, instrument.RecordingCudaGradScaler) else "")
        fail_gated(ctx, f"the GradScaler is disabled on device '{ctx.device.type}'{extra}")


@CHECKS.add("loss-scaled", "float16: backward runs on the scaled loss")
def loss_scaled(ctx):
    r = mine(ctx)
    why = no_loss_scaling(r)
    if why and any(e.kind == "scale" for e in r.events):
        fail(f"backward() ran on scaler.scale(loss), but {why}, so scale() returned the loss unscaled "
             f"(scale {fmt(next(e.info['scale'] for e in r.events if e.kind == 'scale'))}); "
             f"{consequence(GRAD_SCALER_TITLE)}")
    for i, it in enumerate(ran_iterations(r)):
        back = it[0].info
        scaled = [e for e in mine(ctx).events if e.kind == "scale" and e.info["tensor_id"] == back["tensor_id"]]
        if not scaled:
            fail(f"iteration {i}: backward() ran on an unscaled loss ({fmt(back['value'])}); call "
                 "scaler.scale(loss).backward()")


@CHECKS.add("step-through-scaler", "float16: the optimizer steps only through scaler.step")
def step_through_scaler(ctx):
    steps = [e.info for e in mine(ctx).events if e.kind == "opt.step"]
    direct = sum(1 for s in steps if not s["via_scaler"])
    if direct:
        fail(f"optimizer.step() was called directly {direct} time{'s' if direct != 1 else ''}; call "
             "scaler.step(optimizer) so that steps with inf/NaN gradients are skipped")
    its = ran_iterations(mine(ctx))
    counts = [sum(1 for e in it if e.kind == "scaler.step") for it in its]
    if any(c != 1 for c in counts):
        i = next(i for i, c in enumerate(counts) if c != 1)
        fail(f"iteration {i}: scaler.step was called {counts[i]} time{'s' if counts[i] != 1 else ''}; expected "
             "exactly once per iteration")


@CHECKS.add("update-every-iteration", "float16: scaler.update() runs once per iteration, after the step")
def update_every_iteration(ctx):
    for i, it in enumerate(ran_iterations(mine(ctx))):
        kinds = [e.kind for e in it]
        if kinds.count("update") != 1:
            updates = kinds.count("update")
            fail(f"iteration {i}: scaler.update() was called {updates} time{'s' if updates != 1 else ''}; call it "
                 "once per iteration after scaler.step, or the scale never backs off after an overflow")
        if "scaler.step" in kinds and kinds.index("update") < kinds.index("scaler.step"):
            fail(f"iteration {i}: scaler.update() ran before scaler.step(); update after stepping")


@CHECKS.add("zero-grad", "Gradients are zeroed once per iteration, never between backward and step")
def zero_grad(ctx):
    r = mine(ctx)
    for i, it in enumerate(ran_iterations(r)):
        if not it[0].info["grads_zero"]:
            fail(f"iteration {i}: backward() started with non-zero gradients left from the previous iteration; "
                 "call optimizer.zero_grad() once per iteration")
        kinds = [e.kind for e in it]
        if "zero_grad" in kinds and "scaler.step" in kinds and kinds.index("zero_grad") < kinds.index("scaler.step"):
            fail(f"iteration {i}: zero_grad() ran between backward() and the step, so the step used zero gradients")


@CHECKS.add("overflow-skips-step", "An inf gradient skips that step, backs off the scale, and training goes on")
def overflow(ctx):
    r = mine(ctx, inject_at=INJECT_AT)
    its = ran_iterations(r)
    if len(its) <= INJECT_AT + 1:
        fail(f"expected more than {INJECT_AT + 1} iterations, saw {len(its)}")
    hit = its[INJECT_AT]
    if any(e.kind == "opt.step" for e in hit):
        why = no_loss_scaling(r)
        fail(f"iteration {INJECT_AT} had an inf gradient, yet optimizer.step() ran; "
             + (f"{why}, and only an enabled scaler skips such steps: {consequence(GRAD_SCALER_TITLE)}" if why
                else "step through scaler.step"))
    before, after = its[INJECT_AT][0].info["params"], its[INJECT_AT + 1][0].info["params"]
    changed = [(a, b) for a, b in zip(after, before) if not is_close(a, b, EXACT)]
    if changed:
        moved = max((a.double() - b.double()).abs().max().item() for a, b in changed)
        fail(f"iteration {INJECT_AT} had an inf gradient, yet parameters changed (max change {moved:.3g})")
    updates = [e.info for e in hit if e.kind == "update"]
    if not updates or not updates[0]["after"] < updates[0]["before"]:
        seen = f"{fmt(updates[0]['before'])} -> {fmt(updates[0]['after'])}" if updates else "no update() call"
        fail(f"after the overflow at iteration {INJECT_AT} the scale should back off "
             f"(x0.5), saw {seen}")
    expected = [e.info["after"] for e in ref(ctx, inject_at=INJECT_AT).events if e.kind == "update"]
    seen = [e.info["after"] for e in r.events if e.kind == "update"]
    expect_sequence_close("scale after each update()", expected, seen, 0.0)
    losses = as_floats(r.losses)
    if not all(math.isfinite(v) for v in losses):
        fail(f"losses after the overflow must stay finite, got {fmt(losses)}")
    if not any(e.kind == "opt.step" for it in its[INJECT_AT + 1:] for e in it):
        fail("no optimizer step ran after the overflow: training should go on")


@CHECKS.add("clip-after-unscale", "With max_grad_norm, clipping sees unscaled gradients")
def clip_after_unscale(ctx):
    r, rr = mine(ctx, clip=CLIP), ref(ctx, clip=CLIP)
    clips = [e.info for e in r.events if e.kind == "clip"]
    ref_clips = [e.info for e in rr.events if e.kind == "clip"]
    ran_iterations(r)
    if not clips:
        fail(f"max_grad_norm={CLIP} was given but clip_grad_norm_ was never called")
    why = no_loss_scaling(r)
    if why:
        fail(f"max_grad_norm={CLIP}: clip_grad_norm_ ran {len(clips)} time{'s' if len(clips) != 1 else ''}, "
             f"but {why}, so no gradient was scaled and the clip order cannot be told; "
             f"{consequence(GRAD_SCALER_TITLE)}")
    for i, it in enumerate(iterations(r.events)):
        kinds = [e.kind for e in it]
        if "clip" in kinds and ("unscale_" not in kinds or kinds.index("unscale_") > kinds.index("clip")):
            seen, exp = clips[min(i, len(clips) - 1)]["total_norm"], ref_clips[min(i, len(ref_clips) - 1)]["total_norm"]
            fail(f"iteration {i}: clip_grad_norm_ ran before scaler.unscale_(optimizer), on scaled gradients "
                 f"(total norm {fmt(seen)}, unscaled it is {fmt(exp)}); unscale first, then clip")
    diff, where = max_param_diff(r.model, rr.model)
    if diff > 1e-4:
        cause = f"; {consequence(AUTOCAST_TITLE)}: the forward ran outside autocast" if outside_autocast(r) else ""
        fail(f"after training with clipping, parameters differ from the reference by up to {diff:.2e} "
             f"(relative, in {where}){cause}")
