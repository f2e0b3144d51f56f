"""The soft-target cross-entropy half of the mixup_cutmix checks: call the learner's loss and
F.cross_entropy with probability targets on the same logits, compare values and gradients, and name
the usual mistake a wrong answer matches."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from quizapp.checking.harness import FLOAT32, CheckFailed, Tol, as_scalar, fail, fmt, is_close, mismatch, rel_diff

# (rows, classes, kind of targets): mixup and CutMix rows (two classes, zeros elsewhere), one-hot, mixup
# with label smoothing folded in (as timm and DeiT do), arbitrary distributions, a single row.
GRID = [(8, 10, "mixup"), (8, 10, "cutmix"), (6, 5, "one-hot"), (4, 7, "smoothed mixup"), (5, 4, "random"),
        (1, 3, "mixup")]
BIG = 1e4
BIG_GRID = [(6, 5, "mixup"), (4, 50, "one-hot"), (3, 4, "smoothed mixup")]
VALUE_TOL = FLOAT32  # another op order moves the value by ~1e-7
GRAD_TOL = Tol(rtol=1e-4, of_largest=True)  # of the largest gradient entry


def targets_of(kind, rows, classes, g) -> torch.Tensor:
    y = torch.randint(0, classes, (rows,), generator=g)
    perm = torch.randperm(rows, generator=g)
    own, other = F.one_hot(y, classes).float(), F.one_hot(y[perm], classes).float()
    if kind == "one-hot":
        return own
    if kind == "random":
        return torch.softmax(torch.randn(rows, classes, generator=g) * 2, dim=-1)
    lam = 0.859375 if kind == "cutmix" else 0.7
    mixed = lam * own + (1 - lam) * other
    return 0.9 * mixed + 0.1 / classes if kind == "smoothed mixup" else mixed


def cases(ctx, scale=3.0, grid=GRID):
    out = []
    for seed, (rows, classes, kind) in enumerate(grid):
        g = torch.Generator().manual_seed(300 + seed)
        logits = torch.randn(rows, classes, generator=g) * scale
        targets = targets_of(kind, rows, classes, g)
        size = f", logits ~{BIG:.0e}" if scale >= BIG else ""
        where = f"soft_target_cross_entropy on {rows} rows of {classes} classes, {kind} targets{size}"
        out.append((where, logits.to(ctx.device), targets.to(ctx.device)))
    return out


@dataclass
class Run:
    value: object
    grad: torch.Tensor | None


def call(ctx, where, logits, targets) -> Run:
    x = logits.clone().requires_grad_(True)
    with ctx.given(where):
        out = ctx.solution.soft_target_cross_entropy(x, targets.clone())
        if isinstance(out, torch.Tensor) and out.requires_grad and out.numel() == 1:
            out.sum().backward()
    return Run(out, x.grad)


def torch_run(logits, targets) -> Run:
    x = logits.clone().requires_grad_(True)
    out = F.cross_entropy(x, targets)
    out.backward()
    return Run(out.item(), x.grad)


def value_of(run: Run, where: str) -> float:
    value = run.value
    if isinstance(value, torch.Tensor) and value.dim() == 1 and value.numel() > 1:
        fail(f"{where}: expected a scalar loss, got a tensor of shape {tuple(value.shape)}: one loss per row; "
             "return their mean (.mean())")
    return as_scalar(value, where, "a scalar loss (the mean over rows)")


def agrees(ctx, where, logits, targets) -> bool:
    """Whether the loss and its gradient equal torch's on these inputs."""
    try:
        compare(ctx, where, logits, targets)
    except CheckFailed:
        return False
    return True


def variants(logits, targets) -> dict:
    """Usual mistakes, to name the one a wrong answer matches."""
    log_p = F.log_softmax(logits, dim=-1)
    per_row = -(targets * log_p).sum(-1)
    rows, classes = targets.shape
    return {
        f"the rows are summed, not averaged (N = {rows} times too large): take .mean() over the rows":
            per_row.sum(),
        f"it is the mean over all N x C = {rows * classes} entries, not over the N rows: sum over the classes "
        "(.sum(dim=-1)) first, then .mean()": (-(targets * log_p)).mean(),
        "the sign is flipped: the loss is -sum(targets * log_softmax(logits)), positive": -per_row.mean(),
        "it is cross-entropy against targets.argmax(-1), a hard label: the partner's label and its weight are "
        "lost; use the soft targets themselves": F.cross_entropy(logits, targets.argmax(-1)),
        "it is KL(targets || softmax(logits)), cross-entropy minus the targets' entropy (the same gradient, a lower "
        "value): the contract's loss is the cross-entropy itself":
            F.kl_div(log_p, targets, reduction="batchmean"),
    }


def diagnose(logits, targets, seen) -> str:
    for why, v in variants(logits.double(), targets.double()).items():
        if is_close(seen, v.item(), VALUE_TOL):
            return f" Your value matches a loss where {why}."
    return ""


def compare(ctx, where, logits, targets, mine: Run | None = None) -> None:
    mine = mine or call(ctx, where, logits, targets)
    expected = torch_run(logits, targets)
    seen, want = value_of(mine, where), expected.value
    if not is_close(seen, want, VALUE_TOL):
        fail(f"{where}: expected loss {fmt(want)} (F.cross_entropy(logits, targets) with probability targets), got "
             f"{fmt(seen)} (relative difference {rel_diff(seen, want):.2e}, tolerance {VALUE_TOL.rtol:.0e})."
             f"{diagnose(logits, targets, seen)}")
    if mine.grad is None:
        fail(f"{where}: no gradient reached the logits; build the loss from them with torch ops (no .item(), "
             ".detach() or numpy) and return it as a tensor")
    problem = mismatch(mine.grad, expected.grad, GRAD_TOL, what="gradient entries", against="torch's")
    if problem:
        row = int((mine.grad.double() - expected.grad.double()).abs().amax(-1).argmax())
        fail(f"{where}: the gradient w.r.t. the logits should equal torch's: {problem}; row {row}: expected "
             f"{fmt(expected.grad[row, :6].tolist())}, got {fmt(mine.grad[row, :6].tolist())}: it should be "
             "(softmax(logits) - targets) / N")
