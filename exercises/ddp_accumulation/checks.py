"""Behavioural checks for ddp_accumulation: run the learner's loop on 2 real DDP ranks (launch.py,
rank.py) and compare what each rank did with single-process accumulation over both ranks'
micro-batches, computed here from the same start (scenarios.py)."""

from __future__ import annotations

from pathlib import Path

import torch
import torch._dynamo  # noqa: F401 - DDP imports it on first use: once here, not once per forked rank
import torch.nn.functional as F

from quizapp.checking import accumulation
from quizapp.checking import launch as launcher
from quizapp.checking.harness import (
    Checks,
    Required,
    Tol,
    fail,
    happened,
    is_close,
    largest_error,
    mismatch,
    nothing_to_check,
    sibling_module,
)

HERE = Path(__file__).resolve().parent


scn = sibling_module(__file__, "scenarios")

# float32, relative to each vector's largest entry. DDP sums the two ranks' n_i/N-weighted
# gradients and halves them, which adds the same terms in another order than one mean over the
# concatenated group: measured at most 1.5e-7 on CPU. The smallest real bug here (a 2-sample last
# micro-batch weighted 1/4 instead of 2/10) is off by more than 1e-2.
PARAM_TOL = Tol(rtol=2e-5, of_largest=True)
GRAD_TOL = Tol(rtol=2e-5, of_largest=True)
# After the sync every rank holds the same gradient and runs the same optimizer arithmetic, so the
# ranks agree to the bit on CPU; the small allowance is for other back-ends' reduction orders.
RANK_TOL = Tol(rtol=1e-6, of_largest=True)

# The ranks' gloo process group talks over localhost TCP on ports the kernel picks: the child's sandbox
# lets this exercise bind and connect on the ephemeral range (no well-known port).
NEEDS_LOCAL_TCP = True

CHECKS = Checks(Required(
    "train_ddp_accumulation",
    "(model, loader, optimizer, loss_fn, accum_steps, *, max_grad_norm=None) -> int",
    sample_args=(None, None, None, None, 2), sample_kwargs={"max_grad_norm": None},
))

KEYS = [scn.run_key(run) for run in scn.RUNS]


def index_of(name: str, opt: str = "SGD-momentum", clip=None) -> int:
    return scn.RUNS.index((name, opt, clip))


def launched(ctx):
    """One launch of the ranks makes every run; every check reads from it."""

    def go():
        backend, devices = launcher.choose_backend(ctx.device.type, scn.WORLD,
                                                   torch.cuda.device_count() if ctx.device.type == "cuda" else 0)
        # A CUDA context does not survive a fork: spawn the ranks then, fork them otherwise.
        fork = backend == "gloo" and not torch.cuda.is_initialized()
        return launcher.launch(HERE, ctx.solution, world=scn.WORLD, backend=backend, devices=devices, runs=KEYS,
                               fork=fork)

    return ctx.cached("launch", go)


def ranks_of(ctx, index: int) -> list[dict]:
    """Every rank's record of run `index` (raises RankFailure, a check error, if it has none)."""
    return launched(ctx).run(index, KEYS[index])


def truth(ctx, index: int) -> dict:
    """Single-process accumulation over all ranks' micro-batches: one plain step per group on the
    concatenation of every rank's micro-batches of that group, mean loss over all of them."""
    name, opt_name, clip = scn.RUNS[index]
    sizes, k = scn.SCENARIOS[name]

    def go():
        device = torch.device("cuda:0" if launched(ctx).backend == "nccl" else "cpu")
        model = scn.build_model(device)
        optimizer = scn.build_optimizer(model.parameters(), opt_name)
        loaders = scn.rank_loaders(sizes, device)
        grads, params = [], []
        for group in scn.groups(sizes, k):
            x = torch.cat([loaders[r][i][0] for r in range(scn.WORLD) for i in group])
            y = torch.cat([loaders[r][i][1] for r in range(scn.WORLD) for i in group])
            optimizer.zero_grad()
            F.mse_loss(model(x), y).backward()
            if clip is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            grads.append(scn.flat(p.grad for p in model.parameters()))
            optimizer.step()
            params.append(scn.flat(model.parameters()))
        return {"grads": grads, "params": params}

    return ctx.cached(("truth", index), go)


def groups_text(name: str) -> str:
    sizes, k = scn.SCENARIOS[name]
    parts = " | ".join(f"{[sizes[i] for i in g]}" for g in scn.groups(sizes, k))
    return f"{len(sizes)} micro-batches per rank of sizes {sizes}, accum_steps={k}: groups {parts}"


def where(index: int) -> str:
    name, opt_name, clip = scn.RUNS[index]
    extra = f", max_grad_norm={clip}" if clip is not None else ""
    return f"{opt_name}{extra}, {scn.WORLD} ranks, {groups_text(name)}"


def events_of(ctx, kind: str, indices=None):
    """Every rank's events of one kind, over the runs `indices` (all runs when None)."""
    for index in range(len(scn.RUNS)) if indices is None else indices:
        for record in ranks_of(ctx, index):
            yield from (e for e in record["events"] if e["kind"] == kind)


def skip_if_idle(ctx) -> None:
    """Skip a check of how the loop runs when it ran nothing on any rank (no forward, through DDP or
    around it, no backward, no step): a loop that did something keeps the check's own verdict."""
    if not any(True for kind in ("forward", "inner_forward", "backward", "opt.step") for _ in events_of(ctx, kind)):
        nothing_to_check("the loop never ran on any rank: no forward, no backward and no optimizer step")


def split_groups(events: list[dict]) -> list[list[dict]]:
    """A rank's events cut after each optimizer step; forwards after the last step form a group too."""
    out, current = [], []
    for e in events:
        current.append(e)
        if e["kind"] == "opt.step":
            out.append(current)
            current = []
    if any(e["kind"] == "forward" for e in current):
        out.append(current)
    return out


# -- shared comparisons ---------------------------------------------------------------------

ADVICE = accumulation.ADVICE


def compare_to_single_process(ctx, index: int) -> None:
    name, _, clip = scn.RUNS[index]
    ranks, t = ranks_of(ctx, index), truth(ctx, index)
    advice = ADVICE[name] if clip is None else (
        f"with max_grad_norm={clip}, clip the group's whole accumulated, all-reduced gradient once, just "
        f"before its step")
    mine = ranks[0]
    if len(mine["step_params"]) != len(t["params"]):
        fail(f"{where(index)}: expected {len(t['params'])} optimizer steps (one per group), rank 0 took "
             f"{len(mine['step_params'])}")
    for j, (grads, expected) in enumerate(zip(mine["step_grads"], t["grads"])):
        if grads is None:
            fail(f"{where(index)}: at optimizer step {j + 1} some parameters had no gradient (.grad is None)")
        seen = torch.tensor(grads)
        problem = mismatch(seen, expected, GRAD_TOL, what="gradient entries", against="single-process")
        if problem:
            ratio = (seen.norm() / expected.norm()).item()
            apart = max((largest_error(torch.tensor(r["step_grads"][j]), seen) for r in ranks[1:]
                         if j < len(r["step_grads"]) and r["step_grads"][j] is not None), default=0.0)
            if apart > RANK_TOL.rtol:
                advice = (f"the ranks stepped with different gradients (rank 1's differs from rank 0's by "
                          f"{apart:.3g}): the group's accumulated gradient was not all-reduced after its last "
                          f"micro-batch, which must run outside no_sync")
            if is_close(ratio * scn.WORLD, 1.0, Tol(rtol=1e-3)):
                advice = (f"that is 1 / {scn.WORLD}, one over the world size: DDP already averages the ranks' "
                          f"gradients, so do not divide the loss by the world size")
            fail(f"{where(index)}: the gradient rank 0 used at optimizer step {j + 1} should equal the "
                 f"single-process gradient over both ranks' micro-batches of that group: {problem}; its norm is "
                 f"{ratio:.4g}x the expected {expected.norm().item():.4g}; {advice}")
    for j, (params, expected) in enumerate(zip(mine["step_params"], t["params"])):
        problem = mismatch(torch.tensor(params), expected, PARAM_TOL, what="parameters", against="single-process")
        if problem:
            fail(f"{where(index)}: after group {j + 1}, rank 0's parameters should equal single-process "
                 f"accumulation's: {problem}; {advice}")


# -- the checks -------------------------------------------------------------------------------

@CHECKS.add("optimizer-steps", "One optimizer.step() per group on every rank, the trailing group included")
def optimizer_steps(ctx):
    for name in scn.SCENARIOS:
        sizes, k = scn.SCENARIOS[name]
        want = [len(g) for g in scn.groups(sizes, k)]
        index = index_of(name)
        for rank, record in enumerate(ranks_of(ctx, index)):
            per_group = [sum(1 for e in g if e["kind"] == "forward") for g in split_groups(record["events"])
                         if any(e["kind"] == "opt.step" for e in g)]
            if len(per_group) != len(want):
                extra = " (the trailing group was dropped?)" if len(per_group) == len(sizes) // k else ""
                fail(f"{groups_text(name)}: expected {len(want)} optimizer.step() calls on each rank, rank {rank} "
                     f"made {len(per_group)}{extra}")
            if per_group != want:
                fail(f"{groups_text(name)}: expected {want} micro-batch forwards before each step, rank {rank} "
                     f"ran {per_group}")


@CHECKS.add("returns-step-count", "Returns the number of optimizer steps taken")
def returns_step_count(ctx):
    for name in ("divisible", "trailing"):
        index = index_of(name)
        for rank, record in enumerate(ranks_of(ctx, index)):
            taken = sum(1 for e in record["events"] if e["kind"] == "opt.step")
            returned = record["returned"]
            if returned["type"] != "int":
                fail(f"{groups_text(name)}: rank {rank} returned {returned['type']} {returned['repr']}; expected an "
                     f"int, the optimizer steps taken ({taken})")
            if returned["value"] != taken:
                fail(f"{groups_text(name)}: rank {rank} returned {returned['value']}, but optimizer.step() was "
                     f"called {taken} times; return the number of steps taken")
    happened(events_of(ctx, "opt.step", [index_of("divisible"), index_of("trailing")]), "optimizer.step()")


@CHECKS.add("divisible-matches-single-process",
            "Equal groups: same parameters as single-process accumulation over both ranks (SGD-momentum, AdamW)")
def divisible(ctx):
    for opt_name in scn.OPTIMIZERS:
        compare_to_single_process(ctx, index_of("divisible", opt_name))


@CHECKS.add("trailing-group", "A trailing, shorter group is stepped and weighted by its own size")
def trailing(ctx):
    for opt_name in scn.OPTIMIZERS:
        compare_to_single_process(ctx, index_of("trailing", opt_name))


@CHECKS.add("short-last-micro-batch", "A smaller last micro-batch counts n_i / N, not 1 / accum_steps")
def short_last(ctx):
    for opt_name in scn.OPTIMIZERS:
        compare_to_single_process(ctx, index_of("short-last", opt_name))


@CHECKS.add("ranks-identical", "The parameters are identical on every rank after every group")
def ranks_identical(ctx):
    happened(events_of(ctx, "opt.step"), "optimizer.step()")
    for index in range(len(scn.RUNS)):
        ranks = ranks_of(ctx, index)
        first = ranks[0]["step_params"]
        for rank, record in enumerate(ranks[1:], start=1):
            if len(record["step_params"]) != len(first):
                fail(f"{where(index)}: rank 0 took {len(first)} optimizer steps, rank {rank} took "
                     f"{len(record['step_params'])}")
            for j, (a, b) in enumerate(zip(first, record["step_params"])):
                problem = mismatch(torch.tensor(b), torch.tensor(a), RANK_TOL, what="parameters",
                                   against="rank 0's", yours=f"rank {rank}'s")
                if problem:
                    fail(f"{where(index)}: after group {j + 1}, rank {rank}'s parameters should equal rank 0's: "
                         f"{problem}: the ranks stepped with different gradients, so the group's accumulated "
                         f"gradient was not all-reduced after its last micro-batch, which must run outside no_sync")


@CHECKS.add("no-zero-inside-group", "Gradients start each group at zero, are never zeroed inside one, and "
            "nothing is left in .grad at the end")
def no_zero_inside_group(ctx):
    happened(events_of(ctx, "backward", [index_of("trailing"), index_of("short-last")]), "backward()")
    for name in ("trailing", "short-last"):
        index = index_of(name)
        for rank, record in enumerate(ranks_of(ctx, index)):
            left = record["grads_left"]
            problem = accumulation.zeroing_problem(record["events"], left["count"], left["largest"])
            if problem:
                fail(f"{where(index)}: rank {rank}: {problem}")


def allreduces_per_micro_batch(events: list[dict]) -> list[int]:
    """How many gradient all-reduces followed each forward (before the next forward)."""
    counts: list[int] = []
    for e in events:
        if e["kind"] == "forward":
            counts.append(0)
        elif e["kind"] == "allreduce" and counts:
            counts[-1] += 1
    return counts


@CHECKS.add("one-all-reduce-per-group", "DDP all-reduces the gradients once per group, not once per micro-batch")
def one_allreduce_per_group(ctx):
    skip_if_idle(ctx)
    plotted = index_of("divisible")
    for index in range(len(scn.RUNS)):
        name = scn.RUNS[index][0]
        ranks = ranks_of(ctx, index)
        events = ranks[0]["events"]
        if index == plotted:
            sizes, k = scn.SCENARIOS[name]
            ctx.data["curves"] = {
                "title": f"all-reduces after each micro-batch (rank 0, accum_steps={k})", "x": "micro-batch",
                "series": {"yours": allreduces_per_micro_batch(events),
                           "reference": [1 if i == g[-1] else 0 for g in scn.groups(sizes, k) for i in g]},
            }
        for j, group in enumerate(split_groups(events)):
            reduces = [e for e in group if e["kind"] == "allreduce"]
            forwards = sum(1 for e in group if e["kind"] == "forward")
            if len(reduces) != 1:
                model_bytes = 4 * sum(p.numel() for p in scn.build_model("cpu").parameters())
                seen = sum(int(e.get("bytes", 0)) for e in reduces)
                why = ("so the ranks never averaged that group's gradients: the last micro-batch ran inside no_sync"
                       if not reduces else
                       f"{seen} gradient bytes all-reduced instead of {model_bytes}: every micro-batch but the group's last must "
                       f"run forward and backward inside model.no_sync()")
                fail(f"{where(index)}: group {j + 1} ({forwards} micro-batches) all-reduced gradients "
                     f"{len(reduces)} times on rank 0, expected once; {why}")


@CHECKS.add("no-sync-until-last", "Every micro-batch but a group's last runs inside no_sync (forward included)")
def no_sync_until_last(ctx):
    skip_if_idle(ctx)
    for index in range(len(scn.RUNS)):
        for rank, record in enumerate(ranks_of(ctx, index)):
            events = record["events"]
            inner = sum(1 for e in events if e["kind"] == "inner_forward")
            outer = sum(1 for e in events if e["kind"] == "forward")
            if inner > outer:
                fail(f"{where(index)}: rank {rank} called the wrapped module directly ({inner - outer} of {inner} "
                     f"forwards went to model.module, bypassing DDP): call model(x), inside model.no_sync() where the sync is to be skipped")
            for j, group in enumerate(split_groups(events)):
                flags = [bool(e.get("sync")) for e in group if e["kind"] == "forward"]
                want = [False] * (len(flags) - 1) + [True]
                if flags != want:
                    shown = ", ".join("sync" if f else "no_sync" for f in flags)
                    expected = ", ".join("sync" if f else "no_sync" for f in want)
                    if not any(flags):
                        why = ("the last micro-batch ran inside no_sync, so nothing was all-reduced and each rank "
                               "stepped with only its own gradients")
                    elif all(flags):
                        why = ("DDP decides at forward time whether the backward syncs: run forward and backward "
                               "of every micro-batch but the last inside `with model.no_sync():`")
                    elif not flags[-1]:
                        why = ("the last micro-batch ran inside no_sync, so what was accumulated after the last "
                               "synced backward was never averaged across ranks; sync the last micro-batch only")
                    else:
                        why = ("only the group's last micro-batch may sync: its backward all-reduces the whole "
                               "accumulated .grad, so each earlier sync is traffic for nothing")
                    fail(f"{where(index)}: rank {rank}, group {j + 1}: the forwards ran as [{shown}], expected "
                         f"[{expected}]; {why}")


@CHECKS.add("clip-accumulated", "max_grad_norm clips the accumulated, all-reduced gradient once before each step")
def clip_accumulated(ctx):
    index = index_of("trailing", "SGD-momentum", scn.CLIP)
    for rank, record in enumerate(ranks_of(ctx, index)):
        events = record["events"]
        clips, steps, order = accumulation.clip_order_problem(events)
        if clips:
            if clips != steps:
                fail(f"{where(index)}: rank {rank} ran clip_grad_norm_ {clips} times for {steps} optimizer "
                     f"steps; clip once per group, after its last backward()")
            if order:
                fail(f"{where(index)}: on rank {rank} {order}")
        else:
            for j, grads in enumerate(record["step_grads"]):
                norm = torch.tensor(grads).norm().item() if grads is not None else 0.0
                if norm > scn.CLIP * (1 + 1e-4):
                    fail(f"{where(index)}: max_grad_norm={scn.CLIP} was given, but rank {rank}'s optimizer step "
                         f"{j + 1} used a gradient of total norm {norm:.4g}; clip with "
                         f"torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm) just before each step")
    compare_to_single_process(ctx, index)
