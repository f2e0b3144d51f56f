"""Behavioural checks for warmup_cosine: step the learner's scheduler and read every param group's
lr, against the contract's formula (and the reference) on identical optimizers."""

from __future__ import annotations

import math

import torch

from quizapp.checking.harness import Checks, Required, close, fail, fmt, nothing_to_check

# The multiplier is a few float operations; two correct ways of writing it agree to ~1e-16, while
# the smallest real bug (an off-by-one step) moves it by 1/total_steps, far more than 1e-9.
RTOL, ATOL = 1e-6, 1e-9
BASE_LR = 0.1
# (warmup_steps, total_steps, min_lr_ratio): the usual case, no warmup, warmup == total, a floor,
# a floor of 1 (constant after warmup).
CONFIGS = [(10, 100, 0.0), (0, 50, 0.1), (20, 20, 0.0), (5, 40, 0.25), (3, 12, 1.0)]
MAIN = CONFIGS[0]
FLOOR_CONFIGS = [(10, 100, 0.0), (10, 100, 0.1), (0, 30, 0.2), (20, 20, 0.0)]
GROUP_LRS = (0.1, 0.01, 0.003)
GROUP_CONFIG = (4, 20, 0.1)
RESUME_CONFIG, RESUME_AT = (5, 30, 0.1), 12

CHECKS = Checks(Required(
    "get_cosine_schedule_with_warmup",
    "(optimizer, warmup_steps, total_steps, *, min_lr_ratio=0.0) -> torch.optim.lr_scheduler.LRScheduler",
    sample_args=(None, 10, 100), sample_kwargs={"min_lr_ratio": 0.0},
))


def contract(s: int, warmup: int, total: int, ratio: float) -> float:
    if s < warmup:
        return s / warmup
    if s > total:
        return ratio
    p = (s - warmup) / max(1, total - warmup)
    return ratio + (1 - ratio) * 0.5 * (1 + math.cos(math.pi * p))


def args_text(warmup, total, ratio) -> str:
    return f"warmup_steps={warmup}, total_steps={total}, min_lr_ratio={ratio}"


def make_optimizer(ctx, lrs=(BASE_LR,)):
    groups = [{"params": [torch.zeros(2, device=ctx.device, requires_grad=True)], "lr": lr} for lr in lrs]
    return torch.optim.SGD(groups, lr=lrs[0])


def build(ctx, impl, optimizer, warmup, total, ratio):
    try:
        with ctx.given(args_text(warmup, total, ratio)):
            sched = impl.get_cosine_schedule_with_warmup(optimizer, warmup, total, min_lr_ratio=ratio)
    except ValueError as exc:
        fail(f"get_cosine_schedule_with_warmup(optimizer, {args_text(warmup, total, ratio)}) raised "
             f"ValueError({exc}); these arguments are valid")
    if not isinstance(sched, torch.optim.lr_scheduler.LRScheduler):
        fail(f"expected a torch.optim.lr_scheduler.LRScheduler (e.g. LambdaLR), got {type(sched).__name__}")
    return sched


def lrs(optimizer) -> list[float]:
    return [float(g["lr"]) for g in optimizer.param_groups]


def advance(optimizer, sched) -> None:
    optimizer.step()  # no gradients: changes nothing, keeps torch's "step order" warning quiet
    sched.step()


def trace(ctx, impl, warmup, total, ratio, group_lrs=(BASE_LR,)):
    """lr of every group after s = 0, 1, ..., n steps (rows), n well past total_steps."""
    n = total + max(2 * (total - warmup), 10) + 5

    def go():
        optimizer = make_optimizer(ctx, group_lrs)
        sched = build(ctx, impl, optimizer, warmup, total, ratio)
        rows = [lrs(optimizer)]
        for s in range(1, n + 1):
            with ctx.given(f"{args_text(warmup, total, ratio)}, scheduler.step() number {s}"):
                advance(optimizer, sched)
            rows.append(lrs(optimizer))
        return rows

    name = "solution" if impl is ctx.solution else "reference"
    return ctx.cached((name, warmup, total, ratio, group_lrs), go)


def multipliers(ctx, impl, cfg, group=0) -> list[float]:
    base = BASE_LR if len(cfg) == 3 else cfg[3][group]
    return [row[group] / base for row in trace(ctx, impl, *cfg)]


def expect_step(what: str, s: int, expected: float, seen: float, base: float, extra: str = "") -> None:
    if not close(seen, expected, RTOL, ATOL):
        fail(f"{what}: at step {s} (after {s} scheduler.step() call{'s' if s != 1 else ''}) expected multiplier {fmt(expected)} "
             f"(lr {fmt(expected * base)}), got {fmt(seen)} (lr {fmt(seen * base)}){extra}")


def scheduled(rows) -> None:
    """Skip a check of how the lr moves (groups in step, a resume in step) when it never moved: a
    constant lr agrees with itself for no merit."""
    if all(row == rows[0] for row in rows):
        nothing_to_check(f"the lrs stayed {fmt(rows[0])} through {len(rows) - 1} scheduler steps: no schedule ran")


# -- the checks -------------------------------------------------------------------------------

@CHECKS.add("schedule-formula", "lr follows warmup then cosine at every step up to total_steps")
def schedule_formula(ctx):
    yours, reference = multipliers(ctx, ctx.solution, MAIN), multipliers(ctx, ctx.reference, MAIN)
    ctx.data["curves"] = {"title": "lr multiplier per step", "x": "step",
                          "series": {"yours": yours, "reference": reference}}
    for warmup, total, ratio in CONFIGS:
        seen = multipliers(ctx, ctx.solution, (warmup, total, ratio))
        for s in range(total + 1):
            expected = contract(s, warmup, total, ratio)
            hint = ""
            if s < warmup and s + 1 <= warmup and close(seen[s], (s + 1) / warmup, RTOL, ATOL):
                hint = "; that is (s + 1) / warmup_steps: the ramp is one step ahead, m(s) = s / warmup_steps"
            expect_step(args_text(warmup, total, ratio), s, expected, seen[s], BASE_LR, hint)


@CHECKS.add("first-step-zero", "When warming up, the first optimizer step runs at lr 0")
def first_step_zero(ctx):
    # Only the lr before any scheduler.step(): the values after it are the formula's business.
    for warmup, total, ratio in ((10, 100, 0.0), (4, 20, 0.5)):
        optimizer = make_optimizer(ctx)
        build(ctx, ctx.solution, optimizer, warmup, total, ratio)
        first = lrs(optimizer)[0]
        if first != 0.0:
            fail(f"{args_text(warmup, total, ratio)}: right after creating the scheduler (the lr the first "
                 f"optimizer step uses) the lr is {fmt(first)}; expected 0 (m(0) = 0 / {warmup})"
                 + (f". {fmt(first)} = lr / warmup_steps: the ramp is one step ahead"
                    if close(first, BASE_LR / warmup, RTOL, ATOL) else ""))


@CHECKS.add("floor-past-end", "Past total_steps the lr stays at min_lr_ratio (it does not rise again)")
def floor_past_end(ctx):
    for warmup, total, ratio in FLOOR_CONFIGS:
        seen = multipliers(ctx, ctx.solution, (warmup, total, ratio))
        for s in range(total + 1, len(seen)):
            if not close(seen[s], ratio, RTOL, ATOL):
                rises = seen[s] > ratio and any(seen[t] > seen[t - 1] for t in range(total + 1, s + 1))
                extra = ("; the lr is rising again past total_steps, which is what the transformers-style "
                         "schedule does (cos(pi * p) climbs back up once p > 1): hold min_lr_ratio instead"
                         if rises else "")
                expect_step(f"{args_text(warmup, total, ratio)}, past the end", s, ratio, seen[s], BASE_LR, extra)


@CHECKS.add("validation", "Invalid arguments raise ValueError")
def validation(ctx):
    cases = [((-1, 10, 0.0), "warmup_steps < 0"), ((10, 5, 0.0), "total_steps < warmup_steps"),
             ((2, 10, -0.1), "min_lr_ratio < 0"), ((2, 10, 1.5), "min_lr_ratio > 1")]
    for (warmup, total, ratio), why in cases:
        optimizer = make_optimizer(ctx)
        try:
            ctx.solution.get_cosine_schedule_with_warmup(optimizer, warmup, total, min_lr_ratio=ratio)
        except ValueError:
            continue
        except Exception as exc:  # noqa: BLE001 - the wrong kind of error is the learner's to see
            fail(f"get_cosine_schedule_with_warmup(optimizer, {args_text(warmup, total, ratio)}) raised "
                 f"{type(exc).__name__}({exc}); expected ValueError ({why})")
        fail(f"get_cosine_schedule_with_warmup(optimizer, {args_text(warmup, total, ratio)}) returned without "
             f"error; expected ValueError ({why})")


@CHECKS.add("param-groups", "Each param group follows its own initial lr")
def param_groups(ctx):
    # Every group must get the same multiplier of its own initial lr; whether that multiplier is
    # right is the other checks' business, so only the groups' agreement is tested here.
    cfg = (*GROUP_CONFIG, GROUP_LRS)
    rows = trace(ctx, ctx.solution, *cfg)
    for s, row in enumerate(rows):
        m = row[0] / GROUP_LRS[0]
        for g, (seen, base) in enumerate(zip(row, GROUP_LRS)):
            if not close(seen, m * base, RTOL, ATOL * base):
                fail(f"{len(GROUP_LRS)} param groups with initial lrs {fmt(list(GROUP_LRS))}, "
                     f"{args_text(*GROUP_CONFIG)}: at step {s} group 0 has lr {fmt(row[0])} (multiplier {fmt(m)}), so "
                     f"group {g} should have {fmt(base)} * {fmt(m)} = {fmt(m * base)}, got {fmt(seen)} (multiplier "
                     f"{fmt(seen / base)}); all groups' lrs at that step: {fmt(row)}. Scale each group's own "
                     f"initial lr (LambdaLR does)")
    scheduled(rows)


@CHECKS.add("resume", "state_dict() round trip resumes the schedule exactly")
def resume(ctx):
    # Compared with the learner's own uninterrupted run: whether the values are right is the other
    # checks' business; here only "a resumed run continues where it stopped" is tested.
    warmup, total, ratio = RESUME_CONFIG
    group_lrs = (0.1, 0.02)
    straight = trace(ctx, ctx.solution, warmup, total, ratio, group_lrs)
    optimizer = make_optimizer(ctx, group_lrs)
    sched = build(ctx, ctx.solution, optimizer, warmup, total, ratio)
    what = (f"saved after {RESUME_AT} steps and resumed into a new optimizer and scheduler "
            f"({args_text(warmup, total, ratio)}, initial lrs {fmt(list(group_lrs))})")
    with ctx.given(what):
        for _ in range(RESUME_AT):
            advance(optimizer, sched)
        opt_state, sched_state = optimizer.state_dict(), sched.state_dict()
        # A fresh process: new optimizer and scheduler, then load both states, as a checkpoint resume does.
        optimizer2 = make_optimizer(ctx, group_lrs)
        sched2 = build(ctx, ctx.solution, optimizer2, warmup, total, ratio)
        optimizer2.load_state_dict(opt_state)
        sched2.load_state_dict(sched_state)
    for s in range(RESUME_AT + 1, total + 6):
        with ctx.given(f"{what}, scheduler.step() number {s}"):
            advance(optimizer2, sched2)
        for g, (seen, expected, base) in enumerate(zip(lrs(optimizer2), straight[s], group_lrs)):
            if not close(seen, expected, RTOL, ATOL * base):
                restarted = close(seen, straight[s - RESUME_AT][g], RTOL, ATOL * base)
                fail(f"{what}: at step {s} group {g} has lr {fmt(seen)}, but an uninterrupted run of your schedule "
                     f"has {fmt(expected)} there"
                     + (f"; {fmt(seen)} is your lr of step {s - RESUME_AT}: the schedule restarted from 0, so its "
                        "position lives somewhere state_dict() does not save (compute the lr from the step count "
                        "the scheduler keeps, last_epoch)" if restarted else ""))
    scheduled(straight)
