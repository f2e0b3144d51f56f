"""Checks for debug_teacher_trained: distil the same student from the same trained teacher on the
same transfer set (all built from the fixed script's own definitions) with the learner's distill()
and the fixed one, watching the teacher: the mode of its dropout and BatchNorm layers on every
forward pass, its state (parameters and running statistics) before and after, its gradients, and
its accuracy on its own validation set. Then the drill's three questions (see quizapp.checking.drill),
with the teacher left exactly as it was as part of matching the fixed run."""

from __future__ import annotations

import copy

import torch

from quizapp.checking import drill
from quizapp.checking.harness import EXACT, Checks, Required, fail, is_close, listed

LR, MOMENTUM = 0.1, 0.9
TEACHER_SEED, STUDENT_SEED, DATA_SEED, VAL_SEED = 41, 42, 43, 44  # not the script's
VAL_SIZE = 1000
# teacher.eval() at the start, train(False), eval() with requires_grad_(False) instead of no_grad(),
# and eval() before every teacher call give the same numbers bit for bit: over 6 seeds (6 teachers)
# the largest difference is 0 (losses and the student's weights). The near misses are far off:
# BatchNorm alone in eval mode (dropout left on) ends 0.26 (losses) and 0.67 (weights) away, the
# teacher's state put back after a train-mode run 0.31 and 0.82. The tolerance leaves room for
# another device's rounding only. (eval() without no_grad() trains the student identically; the
# teacher's gradients are what `compare` catches there.)
TOLERANCE = drill.Tolerance(loss_rtol=1e-5, param_rtol=1e-5,
                            why="6 seeds of four exact rewrites: bit-identical; the nearest miss: 0.26")

CHECKS = Checks(Required("distill", "(student, teacher, batches, optimizer) -> list[float]",
                         sample_args=(None, None, None, None)))

LAYERS = (torch.nn.Dropout, torch.nn.modules.batchnorm._BatchNorm)


def teacher_for(ctx):
    """One trained teacher per grade; each run distils from its own copy."""
    return ctx.cached("teacher", lambda: ctx.reference.make_teacher(TEACHER_SEED, ctx.device))


def accuracy(model, x, y) -> float:
    was = [(m, m.training) for m in model.modules()]
    model.eval()
    with torch.no_grad():
        correct = (model(x).argmax(-1) == y).float().mean().item()
    for m, mode in was:
        m.train(mode)
    return correct


def one_run(ctx, module, label):
    ref = ctx.reference
    teacher = copy.deepcopy(teacher_for(ctx))
    x_val, y_val = ref.sample(torch.Generator().manual_seed(VAL_SEED), VAL_SIZE)
    x_val, y_val = x_val.to(ctx.device), y_val.to(ctx.device)
    before = {k: v.detach().clone() for k, v in teacher.state_dict().items()}
    extra = {"teacher_forwards": [], "accuracy_before": accuracy(teacher, x_val, y_val)}
    layers = [(name, m) for name, m in teacher.named_modules() if isinstance(m, LAYERS)]

    def on_teacher(module_, inputs, output):
        extra["teacher_forwards"].append([f"{name} ({type(m).__name__})" for name, m in layers if m.training])

    handle = teacher.register_forward_hook(on_teacher)
    torch.manual_seed(STUDENT_SEED)
    student = ref.Student().to(ctx.device)
    optimizer = torch.optim.SGD(student.parameters(), lr=LR, momentum=MOMENTUM)
    data = ref.make_batches(DATA_SEED, ctx.device)
    try:
        trace = drill.run(ctx, label, lambda: module.distill(student, teacher, data, optimizer), student, optimizer,
                          extra=extra)
    finally:
        handle.remove()
    after = teacher.state_dict()
    extra["moved"] = {k: (after[k].double() - v.double()).abs().max().item() for k, v in before.items()
                      if v.is_floating_point() and k in after and not is_close(after[k], v, EXACT)}
    extra["changed_ints"] = {k: int((after[k] - v).max().item()) for k, v in before.items()
                             if not v.is_floating_point() and k in after and not torch.equal(after[k], v)}
    extra["with_grad"] = [n for n, p in teacher.named_parameters() if p.grad is not None and bool(p.grad.any())]
    extra["accuracy_after"] = accuracy(teacher, x_val, y_val)
    return trace


def runs(ctx):
    return drill.both_runs(ctx, one_run, "your distill()", "the fixed distill()")


def teacher_change(extra) -> str | None:
    """What happened to the teacher's state, in words, or None when nothing did."""
    moved = extra["moved"]
    if not moved and not extra["changed_ints"]:
        return None
    parts = []
    if moved:
        name = max(moved, key=moved.get)
        parts.append(f"{len(moved)} of the teacher's tensors changed (teacher.{name} by up to {moved[name]:.4f})")
    if extra["changed_ints"]:
        parts.append(", ".join(f"teacher.{k} counted {n} more batches" for k, n in extra["changed_ints"].items()))
    return (", ".join(parts) + f"; the teacher's accuracy on its own validation set went from "
            f"{extra['accuracy_before']:.1%} to {extra['accuracy_after']:.1%}")


def symptom(ctx, yours, fixed):
    forwards = yours.extra["teacher_forwards"]
    in_train = [f for f in forwards if f]
    change = teacher_change(yours.extra)
    if not in_train and change is None:
        return
    said = []
    if in_train:
        layers = sorted({name for f in in_train for name in f})
        what = []
        if any("Dropout" in name for name in layers):
            what.append("dropout gives the same batch different soft targets on every call")
        if any("BatchNorm" in name for name in layers):
            what.append("BatchNorm normalises with each transfer batch's own statistics and overwrites its running "
                        "statistics with them")
        said.append(f"{len(in_train)} of {len(forwards)} teacher forward passes ran with "
                    f"{listed(layers)} in train mode: " + " and ".join(what))
    if change:
        said.append("after distillation " + change)
    fail("the symptom is still there: " + "; ".join(said))


def keeps_teacher() -> drill.Keep:
    """The teacher still gives soft targets for every batch: dropping it hides its drift."""

    def problem(yours, fixed):
        ran, want = len(yours.extra["teacher_forwards"]), len(fixed.extra["teacher_forwards"])
        if ran < min(want, len(yours.forwards)):  # fewer batches overall are named on their own
            return (f"the teacher ran {ran} forward passes where the fixed script asks it {want} times: without "
                    "the teacher's soft targets nothing is distilled; keep the teacher and stop it drifting")
        return None

    return drill.Keep("the teacher", problem)


def compare(ctx, yours, fixed):
    """The teacher ends exactly as it started, with no gradient, as in the fixed run."""
    change = teacher_change(yours.extra)
    if change:
        fail("the student trains as in the fixed run, but the teacher did not stay as it was: " + change)
    if yours.extra["with_grad"]:
        fail(f"the student trains as in the fixed run, but {len(yours.extra['with_grad'])} teacher parameters "
             f"hold gradients after distillation ({listed(yours.extra['with_grad'])}): the teacher's "
             "logits were not computed under torch.no_grad() (or detached), so backward ran into the teacher; "
             "any optimizer or weight decay that reaches those parameters would train it")


def advice(yours, fixed):
    """Teacher passes that ran with layers in train mode, though its state ended as it began."""
    in_train = sorted({name for f in yours.extra["teacher_forwards"] for name in f})
    if not in_train:
        return None
    said = (f"the teacher's soft targets were computed with {listed(in_train)} in train mode: put the "
            "whole teacher in eval mode")
    if teacher_change(yours.extra) is None and any("BatchNorm" in name for name in in_train):
        said += "; restoring its state afterwards does not undo the noisy targets the student learned from"
    return said


drill.register(CHECKS, runs=runs, symptom_id="teacher-frozen",
               symptom_title="The teacher stays frozen: eval mode on every call, its state unchanged",
               symptom=symptom, tolerance=TOLERANCE, keep=[keeps_teacher()], compare=compare, advice=advice)
