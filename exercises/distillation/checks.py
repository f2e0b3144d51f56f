"""Behavioural checks for distillation: call the learner's loss and the reference on identical
logits and compare values and gradients; run one epoch of each on identical models and data and
compare the student's parameters, the teacher's state and the returned mean loss."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from quizapp.checking.harness import (
    Checks,
    Required,
    Tol,
    as_scalar,
    fail,
    fmt,
    happened,
    is_close,
    listed,
    max_param_diff,
    mismatch,
    nothing_to_check,
    rel_diff,
)

CLASSES = 6
# (batch, temperature, alpha): batch 1 included, alpha at both ends, T below and above 1.
GRID = [
    (1, 4.0, 0.7), (5, 1.0, 0.0), (5, 2.0, 1.0), (8, 4.0, 0.3),
    (8, 0.5, 0.7), (16, 8.0, 1.0), (16, 3.0, 0.5), (3, 4.0, 0.0),
]
# Same formula, other op order gives ~1e-7 in float32; the smallest bug here (KL's arguments
# swapped) moves the gradient by more than 1e-2 of its size.
VALUE_TOL = Tol(rtol=1e-4, atol=1e-6)
GRAD_TOL = Tol(rtol=1e-3, of_largest=True)  # of the largest reference gradient entry
BIG = 1e4
T_SCALE = (1.0, 2.0, 4.0, 8.0)

EPOCH_T, EPOCH_ALPHA = 2.0, 0.6  # not the defaults: the epoch must pass them on
BATCHES, BATCH, FEATURES = 4, 16, 8
PARAM_RTOL = 1e-4  # of each parameter tensor's largest entry (harness.max_param_diff)
EPOCH_TOL = Tol(rtol=1e-5)  # the mean of the same batch losses, summed in another order at most

CHECKS = Checks(
    Required("distillation_loss", "(student_logits, teacher_logits, labels, *, temperature=4.0, alpha=0.7) -> torch.Tensor",
             sample_args=(None, None, None), sample_kwargs={"temperature": 4.0, "alpha": 0.7}),
    Required("distill_epoch", "(student, teacher, loader, optimizer, *, temperature=4.0, alpha=0.7, device) -> float",
             sample_args=(None, None, None, None), sample_kwargs={"temperature": 4.0, "alpha": 0.7, "device": None}),
)


# -- the loss --------------------------------------------------------------------------------

def logits(ctx, batch, seed, scale=2.0):
    g = torch.Generator().manual_seed(seed)
    s = torch.randn(batch, CLASSES, generator=g) * scale
    t = torch.randn(batch, CLASSES, generator=g) * scale
    y = torch.randint(0, CLASSES, (batch,), generator=g)
    return s.to(ctx.device), t.to(ctx.device), y.to(ctx.device)


@dataclass
class LossRun:
    value: object  # what the function returned
    grad: torch.Tensor | None  # d loss / d student_logits
    teacher_grad: torch.Tensor | None


def call_loss(ctx, impl, s, t, y, T, alpha, *, teacher_requires_grad=True) -> LossRun:
    s = s.clone().requires_grad_(True)
    t = t.clone().requires_grad_(teacher_requires_grad)
    size = f", logits ~{BIG:.0e}" if s.abs().max().item() >= BIG / 10 else ""
    with ctx.given(f"a batch of {len(s)}, temperature={T}, alpha={alpha}{size}"):
        out = impl.distillation_loss(s, t, y.clone(), temperature=T, alpha=alpha)
        if isinstance(out, torch.Tensor) and out.requires_grad:
            out.sum().backward()
    return LossRun(out, s.grad, t.grad)


def variants(s, t, y, T, alpha) -> dict:
    """Common mistakes, to name the one a wrong answer matches."""
    ls, lt = F.log_softmax(s / T, -1), F.log_softmax(t / T, -1)
    kl = F.kl_div(ls, lt, reduction="batchmean", log_target=True)
    kl_swapped = F.kl_div(lt, ls, reduction="batchmean", log_target=True)
    kl_mean = F.kl_div(ls, lt, reduction="mean", log_target=True)
    ce = F.cross_entropy(s, y)
    return {
        "the T\u00b2 factor is missing": alpha * kl + (1 - alpha) * ce,
        "KL's arguments are swapped (you computed KL(student || teacher); the target is the teacher: "
        "KL(teacher || student) = kl_div(log_softmax(student/T), softmax(teacher/T)))": T * T * alpha * kl_swapped + (1 - alpha) * ce,
        "KL is averaged over batch x classes (reduction='mean'); use reduction='batchmean'": T * T * alpha * kl_mean + (1 - alpha) * ce,
        "alpha and 1 - alpha are swapped (alpha weighs the soft, teacher term)": T * T * (1 - alpha) * kl + alpha * ce,
        "the soft term is computed at temperature 1": alpha * F.kl_div(F.log_softmax(s, -1), F.log_softmax(t, -1), reduction="batchmean", log_target=True) + (1 - alpha) * ce,
    }


def diagnose(s, t, y, T, alpha, seen_value=None, seen_grad=None) -> str:
    for why, loss_fn in variants(s, t, y, T, alpha).items():
        x = s.clone().requires_grad_(True)
        v = variants(x, t, y, T, alpha)[why]
        v.backward()
        if seen_grad is not None:
            if is_close(seen_grad, x.grad, GRAD_TOL):
                return f" Your gradient matches a loss where {why}."
        elif seen_value is not None and is_close(seen_value, v.item(), VALUE_TOL):
            return f" Your value matches a loss where {why}."
    return ""


def grid_runs(ctx):
    def go():
        out = []
        for i, (batch, T, alpha) in enumerate(GRID):
            s, t, y = logits(ctx, batch, seed=100 + i)
            out.append(((batch, T, alpha), (s, t, y), call_loss(ctx, ctx.solution, s, t, y, T, alpha),
                        call_loss(ctx, ctx.reference, s, t, y, T, alpha)))
        return out

    return ctx.cached("grid", go)


@CHECKS.add("loss-value", "Loss value matches the reference (batch sizes 1-16, T 0.5-8, alpha 0-1)")
def loss_value(ctx):
    for (batch, T, alpha), (s, t, y), mine, ref in grid_runs(ctx):
        where = f"batch={batch}, temperature={T}, alpha={alpha}"
        seen, expected = as_scalar(mine.value, where), as_scalar(ref.value, where)
        if not is_close(seen, expected, VALUE_TOL):
            fail(f"{where}: expected loss {fmt(expected)}, got {fmt(seen)} (relative difference "
                 f"{rel_diff(seen, expected):.2e}, tolerance {VALUE_TOL.rtol:.0e}).{diagnose(s, t, y, T, alpha, seen_value=seen)}")


@CHECKS.add("loss-gradient", "Gradient w.r.t. the student's logits matches the reference")
def loss_gradient(ctx):
    for (batch, T, alpha), (s, t, y), mine, ref in grid_runs(ctx):
        where = f"batch={batch}, temperature={T}, alpha={alpha}"
        as_scalar(mine.value, where)
        if mine.grad is None:
            fail(f"{where}: no gradient reached student_logits; the loss must be built from them with torch "
                 "ops (no .item(), .detach() or .numpy() on the student's side)")
        problem = mismatch(mine.grad, ref.grad, GRAD_TOL, what="gradient entries", against="the reference")
        if problem:
            fail(f"{where}: the gradient w.r.t. student_logits should equal the reference's: {problem}; e.g. row 0: "
                 f"expected {fmt(ref.grad[0].tolist())}, got {fmt(mine.grad[0].tolist())}."
                 f"{diagnose(s, t, y, T, alpha, seen_grad=mine.grad)}")


@CHECKS.add("returns-scalar-float32", "Returns a 0-dim float32 tensor that carries the graph")
def returns_scalar(ctx):
    s, t, y = logits(ctx, 4, seed=7)
    out = call_loss(ctx, ctx.solution, s, t, y, 4.0, 0.7).value
    if not isinstance(out, torch.Tensor):
        fail(f"expected a torch.Tensor, got {type(out).__name__} ({out!r}); return the loss tensor itself "
             "(no .item()) so the caller can call .backward() on it")
    if out.dim() != 0:
        fail(f"expected a 0-dim (scalar) tensor, got shape {tuple(out.shape)}; reduce to a single number "
             "(batchmean for KL, the default mean for cross-entropy)")
    if out.dtype != torch.float32:
        fail(f"expected dtype torch.float32 for float32 logits, got {out.dtype}")
    if not out.requires_grad:
        fail("the returned loss has requires_grad=False: it is cut off from student_logits")


@CHECKS.add("no-grad-to-teacher", "No gradient flows into the teacher's logits")
def no_grad_to_teacher(ctx):
    # A loss with no graph sends no gradient anywhere: its teacher's .grad stays None for no merit.
    happened((mine for (_, _, alpha), _, mine, _ in grid_runs(ctx) if alpha != 0.0
              and isinstance(mine.value, torch.Tensor) and mine.value.requires_grad), "a backward through your loss")
    for (batch, T, alpha), _, mine, _ in grid_runs(ctx):
        if alpha == 0.0:
            continue  # the soft term is weighted by zero; its gradient may legitimately be zero
        if mine.teacher_grad is not None:
            fail(f"batch={batch}, temperature={T}, alpha={alpha}: teacher_logits was passed with requires_grad=True "
                 f"and after backward its .grad has norm {mine.teacher_grad.norm().item():.3g} (expected .grad to "
                 "stay None); the teacher is a fixed target: use teacher_logits.detach()")


SAME_AS_VALUE = (" That is the formula's mistake, not instability; this follows from the check \"Loss value "
                 "matches the reference\" (or the one on its gradient)")


@CHECKS.add("large-logits-stable", "Finite, correct value and gradient for logits of magnitude 1e4")
def large_logits(ctx):
    for i, (T, alpha) in enumerate(((4.0, 0.7), (1.0, 0.5), (8.0, 1.0))):
        s, t, y = logits(ctx, 8, seed=300 + i, scale=BIG)
        where = f"logits ~{BIG:.0e}, temperature={T}, alpha={alpha}"
        mine, ref = call_loss(ctx, ctx.solution, s, t, y, T, alpha), call_loss(ctx, ctx.reference, s, t, y, T, alpha)
        seen, expected = as_scalar(mine.value, where), as_scalar(ref.value, where)
        if not math.isfinite(seen):
            fail(f"{where}: the loss is {seen} (expected {fmt(expected)}): softmax underflows to exact 0 for such "
                 "logits and log(0) = -inf; use F.log_softmax, never torch.log(F.softmax(...))")
        if mine.grad is None:
            fail(f"{where}: no gradient reached student_logits")
        bad = int((~torch.isfinite(mine.grad)).sum())
        if bad:
            fail(f"{where}: {bad} of {mine.grad.numel()} gradient entries are inf/NaN (loss {fmt(seen)}); use "
                 "F.log_softmax, never torch.log(F.softmax(...))")
        # Finite but wrong is the formula's mistake, not instability: name it as loss-value does.
        if not is_close(seen, expected, VALUE_TOL):
            fail(f"{where}: finite, but expected loss {fmt(expected)}, got {fmt(seen)} (relative difference "
                 f"{rel_diff(seen, expected):.2e}, tolerance {VALUE_TOL.rtol:.0e}).{diagnose(s, t, y, T, alpha, seen_value=seen)}"
                 f"{SAME_AS_VALUE}")
        problem = mismatch(mine.grad, ref.grad, GRAD_TOL, what="gradient entries", against="the reference")
        if problem:
            fail(f"{where}: finite, but the gradient should equal the reference's: {problem}."
                 f"{diagnose(s, t, y, T, alpha, seen_grad=mine.grad)}{SAME_AS_VALUE}")


@CHECKS.add("t-squared-scaling", "The T\u00b2 factor keeps the gradient size about constant across temperatures")
def t_squared(ctx):
    s, t, y = logits(ctx, 8, seed=11)

    def norms(impl):
        out = []
        for T in T_SCALE:
            r = call_loss(ctx, impl, s, t, y, T, 1.0)
            if r.grad is None:
                fail(f"temperature={T}, alpha=1: no gradient reached student_logits")
            out.append(r.grad.norm().item())
        return out

    mine, ref = norms(ctx.solution), norms(ctx.reference)
    ratios = [m / mine[0] if mine[0] else math.inf for m in mine]
    ref_ratios = [r / ref[0] for r in ref]
    for T, ratio, expected in zip(T_SCALE, ratios, ref_ratios):
        if not (math.isfinite(ratio) and 0.5 <= ratio / expected <= 2.0):
            fail(f"with alpha=1, the gradient norm at temperature {T} is {ratio:.3g} x its size at temperature "
                 f"{T_SCALE[0]} (reference: {expected:.3g} x; norms {fmt(mine)} for T={list(T_SCALE)}). Softening "
                 f"by T shrinks the KL gradient by about 1/T\u00b2 (1/{T * T:g} here); multiply the KL term by T\u00b2")


# -- the epoch -------------------------------------------------------------------------------

def build(device, seed=0):
    torch.manual_seed(seed)
    teacher = torch.nn.Sequential(torch.nn.Linear(FEATURES, 32), torch.nn.BatchNorm1d(32), torch.nn.ReLU(),
                                  torch.nn.Dropout(0.3), torch.nn.Linear(32, CLASSES))
    # Give the BatchNorm non-trivial running stats, as a trained teacher would have.
    with torch.no_grad():
        bn = teacher[1]
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
        bn.num_batches_tracked.fill_(100)
    teacher = teacher.to(device).train()  # handed over in train mode: the solution must switch it
    student = torch.nn.Sequential(torch.nn.Linear(FEATURES, 16), torch.nn.ReLU(),
                                  torch.nn.Linear(16, CLASSES)).to(device)
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(BATCHES * BATCH, FEATURES, generator=g)
    y = torch.randint(0, CLASSES, (BATCHES * BATCH,), generator=g)
    loader = [(x[i:i + BATCH], y[i:i + BATCH]) for i in range(0, len(x), BATCH)]
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)
    return student, teacher, loader, optimizer


@dataclass
class EpochRun:
    result: object
    student: torch.nn.Module
    teacher: torch.nn.Module
    teacher_before: dict
    forwards: list  # one dict per teacher forward
    per_batch: list  # the reference's per-batch losses (reference run only)


def epoch(ctx, impl) -> EpochRun:
    def go():
        student, teacher, loader, optimizer = build(ctx.device)
        before = {k: v.detach().clone() for k, v in teacher.state_dict().items()}
        forwards = []

        def hook(module, inputs, output):
            forwards.append({
                "training": [f"{n or 'teacher'} ({type(m).__name__})" for n, m in module.named_modules() if m.training],
                "grad_enabled": torch.is_grad_enabled(),
                "inference": torch.is_inference_mode_enabled(),
                "requires_grad": isinstance(output, torch.Tensor) and output.requires_grad,
            })

        handle = teacher.register_forward_hook(hook)
        try:
            with ctx.given(f"temperature={EPOCH_T}, alpha={EPOCH_ALPHA}, {BATCHES} batches of {BATCH}, "
                           f"device={ctx.device.type}"):
                result = impl.distill_epoch(student, teacher, loader, optimizer, temperature=EPOCH_T,
                                            alpha=EPOCH_ALPHA, device=ctx.device)
        finally:
            handle.remove()
        return EpochRun(result, student, teacher, before, forwards, [])

    name = "solution" if impl is ctx.solution else "reference"
    return ctx.cached(("epoch", name), go)


def reference_batch_losses(ctx) -> list[float]:
    """The reference loop's per-batch losses, replayed by hand (to recognise a 'last loss' bug)."""
    def go():
        student, teacher, loader, optimizer = build(ctx.device)
        teacher.eval()
        out = []
        for x, y in loader:
            x, y = x.to(ctx.device), y.to(ctx.device)
            with torch.no_grad():
                t = teacher(x)
            loss = ctx.reference.distillation_loss(student(x), t, y, temperature=EPOCH_T, alpha=EPOCH_ALPHA)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            out.append(loss.item())
        return out

    return ctx.cached("ref-batches", go)


def skip_if_idle(ctx, r: EpochRun) -> None:
    """Skip a check of the teacher when distill_epoch did nothing at all: no teacher forward seen and the
    student left as it was. A student that trained while no teacher forward was seen keeps the check's
    own verdict."""
    if not r.forwards and max_param_diff(r.student, build(ctx.device)[0])[0] == 0:
        nothing_to_check("distill_epoch ran nothing: no teacher forward, and the student is as it was")


@CHECKS.add("teacher-eval-mode", "distill_epoch runs the teacher in eval mode")
def teacher_eval(ctx):
    r = epoch(ctx, ctx.solution)
    if not r.forwards:
        skip_if_idle(ctx, r)
        fail("the teacher's forward never ran during distill_epoch; its logits are the soft targets")
    for i, f in enumerate(r.forwards):
        if f["training"]:
            fail(f"teacher forward {i} of {len(r.forwards)} ran with modules in train mode "
                 f"({listed(f['training'])}): dropout was active and BatchNorm used batch statistics and "
                 "moved its running stats; call teacher.eval() before the loop")


@CHECKS.add("teacher-unchanged", "distill_epoch leaves the teacher's parameters and buffers unchanged")
def teacher_unchanged(ctx):
    r = epoch(ctx, ctx.solution)
    after = r.teacher.state_dict()
    for name, old in r.teacher_before.items():
        new = after[name]
        if new.shape != old.shape or not torch.equal(new, old):
            change = (new.double() - old.double()).abs().max().item() if new.shape == old.shape else math.nan
            fail(f"teacher's {name} changed during distill_epoch (max change {change:.3g}); the teacher must stay "
                 "as it was: eval mode keeps BatchNorm's running stats fixed, and only the student's parameters "
                 "belong to the optimizer")
    skip_if_idle(ctx, r)  # a teacher never run is unchanged for no merit


@CHECKS.add("teacher-no-graph", "The teacher runs without building an autograd graph")
def teacher_no_graph(ctx):
    r = epoch(ctx, ctx.solution)
    if not r.forwards:
        skip_if_idle(ctx, r)
        fail("the teacher's forward never ran during distill_epoch")
    graphed = [i for i, f in enumerate(r.forwards) if f["requires_grad"]]
    if graphed:
        fail(f"{len(graphed)} of {len(r.forwards)} teacher forwards built an autograd graph (output requires_grad=True, "
             f"grad mode {'on' if r.forwards[graphed[0]]['grad_enabled'] else 'off'}): that stores every activation "
             "of the teacher for nothing; run it under `with torch.no_grad():`")
    with_grad = [n for n, p in r.teacher.named_parameters() if p.grad is not None]
    if with_grad:
        fail(f"after distill_epoch, {len(with_grad)} teacher parameters have .grad set ({listed(with_grad, 3)}); "
             "no gradient may reach the teacher")


@CHECKS.add("epoch-trains-student", "After one epoch the student's parameters match the reference")
def trains_student(ctx):
    mine, ref = epoch(ctx, ctx.solution), epoch(ctx, ctx.reference)
    diff, where = max_param_diff(mine.student, ref.student)
    if not diff <= PARAM_RTOL:
        untouched, _ = max_param_diff(mine.student, build(ctx.device)[0])
        extra = " (the student did not change at all: zero_grad, backward, step for every batch)" if untouched == 0 else ""
        fail(f"after one epoch (temperature={EPOCH_T}, alpha={EPOCH_ALPHA}, {BATCHES} batches) the student's "
             f"parameters differ from the reference by up to {diff:.2e} relative (in {where}; tolerance "
             f"{PARAM_RTOL:.0e}){extra}; per batch: teacher logits without grad, student forward, "
             "distillation_loss with the given temperature and alpha, zero_grad, backward, step")


@CHECKS.add("epoch-mean-loss", "distill_epoch returns the epoch's mean loss as a float")
def mean_loss(ctx):
    result = epoch(ctx, ctx.solution).result
    expected = epoch(ctx, ctx.reference).result
    if isinstance(result, torch.Tensor):
        fail(f"got a tensor ({result!r}); return a Python float (sum loss.item() over the batches and divide)")
    if not isinstance(result, (int, float)) or isinstance(result, bool):
        fail(f"expected a float, got {type(result).__name__} ({result!r})")
    result = float(result)
    per_batch = reference_batch_losses(ctx)
    if not is_close(result, expected, EPOCH_TOL):
        if is_close(result, per_batch[-1], EPOCH_TOL):
            fail(f"you returned {fmt(result)}, the last batch's loss; return the mean over the epoch's "
                 f"{len(per_batch)} batches {fmt(per_batch)}: {fmt(expected)}")
        if is_close(result, sum(per_batch), EPOCH_TOL):
            fail(f"you returned {fmt(result)}, the sum of the batch losses; divide by the {len(per_batch)} batches: "
                 f"{fmt(expected)}")
        diff, _ = max_param_diff(epoch(ctx, ctx.solution).student, epoch(ctx, ctx.reference).student)
        why = (f"; your student also trained differently (parameters up to {diff:.2e} apart), so its batch losses "
               "differ too: see the check on the student's parameters") if diff > PARAM_RTOL else ""
        fail(f"expected the epoch's mean loss {fmt(expected)} (batch losses {fmt(per_batch)}), got {fmt(result)} "
             f"(relative difference {rel_diff(result, expected):.2e}, tolerance {EPOCH_TOL.rtol:.0e}){why}")
