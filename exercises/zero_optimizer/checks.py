"""Behavioural checks for zero_optimizer: run the learner's ShardedAdamW on real gloo ranks (launch.py,
rank.py), 2 on the default group for every run of scenarios.py and 4 split into two groups for the
group check, and compare what each rank recorded after every step with torch.optim.AdamW stepped in
one process on the averaged gradients (truth.py)."""

from __future__ import annotations

from pathlib import Path

import torch
import torch._dynamo  # noqa: F401 - torch.optim imports it on a first step: once here, not once per rank

from quizapp.checking import launch as launcher
from quizapp.checking.harness import (
    EXACT,
    Checks,
    Required,
    Tol,
    close_elements,
    fail,
    is_close,
    listed,
    mismatch,
    nothing_to_check,
    sibling_module,
)

HERE = Path(__file__).resolve().parent
scn = sibling_module(__file__, "scenarios")
truth_of = sibling_module(__file__, "truth")

# The contract's tolerances, element by element, against torch.optim.AdamW in one process. The
# reference and the inner-AdamW alternative were measured equal to it bit for bit; the flat
# reduce-scatter alternative (m updated by mul and add, not lerp) within 1.8e-15 (float64) and 2.8e-6
# of an element's size (float32). The smallest real mistake, gradients summed with the default eps,
# moves a float64 parameter by 1.7e-11, five times its bound; in float32 only eps = 0.05 shows it.
TOLS = {"float64": Tol(rtol=1e-10, atol=1e-12), "float32": Tol(rtol=1e-5, atol=1e-6)}

# The ranks' gloo process group talks over localhost TCP on ports the kernel picks.
NEEDS_LOCAL_TCP = True

CHECKS = Checks(Required(
    "ShardedAdamW", "(params, *, rank, world_size, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, "
    "group=None)", sample_args=([],), sample_kwargs={"rank": 0, "world_size": 2}, is_class=True,
))

KEYS = [scn.run_key(run) for run in scn.RUNS]
GROUP_KEYS = [f"group/{scn.run_key(run)}" for run in scn.GROUP_RUNS]


# -- the launches and what they recorded -----------------------------------------------------

def launched(ctx, world: int = scn.WORLD):
    """One launch of `world` ranks makes every run of that world; every check reads from it."""

    def go():
        backend, devices = launcher.choose_backend(ctx.device.type, world,
                                                   torch.cuda.device_count() if ctx.device.type == "cuda" else 0)
        fork = backend == "gloo" and not torch.cuda.is_initialized()
        return launcher.launch(HERE, ctx.solution, world=world, backend=backend, devices=devices,
                               runs=KEYS if world == scn.WORLD else GROUP_KEYS, fork=fork)

    return ctx.cached(("launch", world), go)


def truth(ctx, index: int) -> truth_of.Truth:
    return ctx.cached(("truth", index), lambda: truth_of.Truth(scn.RUNS[index], scn.seed_of(index)))


def runs(ctx, kinds=("full", "none")):
    """(index, run, where, every rank's record) of each 2-rank run of these kinds."""
    for index, run in enumerate(scn.RUNS):
        if run[2] in kinds:
            yield index, run, scn.describe(run), launched(ctx).run(index, KEYS[index])


def steps_of(record: dict, where: str, rank: int) -> list[dict]:
    """The steps rank `rank` recorded; the learner's error of the run, as a check error, if it stopped early."""
    error = record.get("error")
    if error:
        raise launcher.RankFailure(f"{where}: rank {rank}, in {error['stage']}: {error['message']}")
    return record["steps"]


def changed_anything(ctx) -> bool:
    """Whether any step of any 2-rank run moved any parameter on any rank: a check of what a step
    left behind has nothing to judge otherwise."""

    def go():
        for index, run, _, ranks in runs(ctx):
            start = truth(ctx, index).start
            for rank, record in enumerate(ranks):
                for step in steps_of(record, scn.describe(run), rank):
                    if not is_close(scn.from_record(step["params"], run[0]), start, EXACT):
                        return True
        return False

    return ctx.cached("changed", go)


def require_a_step(ctx, what: str) -> None:
    if not changed_anything(ctx):
        nothing_to_check(f"no step() changed any parameter in any run, so {what}")


def owned_text(rank: int, world: int = scn.WORLD) -> str:
    start, end = scn.owned(rank, world)
    return f"flat elements [{start}, {end})"


# -- AdamW's math --------------------------------------------------------------------------------

def owned_problem(seen: torch.Tensor, expected: torch.Tensor, rank: int, dtype: str, world: int = scn.WORLD):
    start, end = scn.owned(rank, world)
    problem = mismatch(seen[start:end], expected[start:end], TOLS[dtype], what="owned elements",
                       against="torch.optim.AdamW's")
    if problem is None:
        return None
    bad = ~close_elements(seen[start:end], expected[start:end], TOLS[dtype])
    first = start + int(bad.nonzero()[0])
    return f"{problem}; the first is {scn.element_text(first)}"


def cause(t: truth_of.Truth, seen: torch.Tensor, step: int, rank: int, names) -> str:
    """The known mistake the rank's owned elements after `step` match, in words, or ''."""
    start, end = scn.owned(rank, t.world)
    tol = TOLS[t.run[0]]
    w = t.world
    words = {
        "summed": f"; they match AdamW on the gradients summed over the {w} ranks, not averaged: divide the "
                  f"all-reduced gradient by world_size ({w}); Adam hides most of a constant factor, but not in eps",
        "own": f"; they match AdamW on rank {rank}'s own gradients alone: the gradients were never averaged over "
               f"the ranks (all-reduce, then divide by world_size)",
        "coupled": "; they match torch.optim.Adam with weight_decay (L2: weight_decay * p added to the gradient, "
                   "then through the moments), not AdamW: AdamW decays the parameter itself, p *= 1 - lr * "
                   "weight_decay, apart from the gradient",
        "shared-step": "; they match AdamW with one step count shared by every parameter: a parameter first given "
                       "a gradient later must start at t = 1 (bias corrections 1 - beta1^t, 1 - beta2^t of its "
                       "own steps), as torch.optim.AdamW keeps state['step'] per parameter",
        "none-as-zero": "; they match AdamW given a zero gradient where .grad was None: torch.optim.AdamW skips "
                        "such a parameter (no decay, no moment update, no step count)",
        "none-decayed": "; they match AdamW that still decays a parameter whose .grad is None: torch.optim.AdamW "
                        "skips it entirely, decay included",
    }
    for name in names:
        wrong = t.wrong(name, rank)[step - 1]
        if is_close(seen[start:end], wrong[start:end], tol):
            return words[name]
    return ""


def judge_math(ctx, kinds, names) -> None:
    for index, run, where, ranks in runs(ctx, kinds):
        t = truth(ctx, index)
        for rank, record in enumerate(ranks):
            start, end = scn.owned(rank)
            before = t.start
            for k, step in enumerate(steps_of(record, where, rank), start=1):
                seen = scn.from_record(step["params"], run[0])
                problem = owned_problem(seen, t.right[k - 1], rank, run[0])
                if problem:
                    still = (": step() left every one of them exactly as it was"
                             if is_close(seen[start:end], before[start:end], EXACT) else "")
                    fail(f"{where}: rank {rank}, after step {k}, in its {owned_text(rank)}: {problem}{still}"
                         f"{cause(t, seen, k, rank, names)}")
                before = seen


@CHECKS.add("adamw-step", "After every step, the elements each rank owns equal torch.optim.AdamW's, stepped in "
            "one process on the gradients averaged over the ranks")
def adamw_step(ctx):
    judge_math(ctx, ("full",), ("summed", "own", "coupled"))


@CHECKS.add("skips-none-grads", "A parameter whose .grad is None at a step is left exactly as it was: no decay, "
            "no update")
def skips_none_grads(ctx):
    require_a_step(ctx, "there is no skipped parameter to tell from one never stepped")
    for index, run, where, ranks in runs(ctx, ("none",)):
        t = truth(ctx, index)
        for rank, record in enumerate(ranks):
            before = t.start
            for k, step in enumerate(steps_of(record, where, rank), start=1):
                now = scn.from_record(step["params"], run[0])
                for i in range(len(scn.SHAPES)):
                    if scn.has_grad(run, i, k):
                        continue
                    lo, hi = scn.OFFSETS[i], scn.OFFSETS[i] + scn.SIZES[i]
                    problem = mismatch(now[lo:hi], before[lo:hi], EXACT, what="elements",
                                       against="before the step", yours="after")
                    if problem:
                        ratio = now[lo:hi].double() / before[lo:hi].double()
                        decayed = ""
                        h = dict(scn.DEFAULTS, **scn.HYPER[run[1]])
                        factor = 1 - h["lr"] * h["weight_decay"]
                        if is_close(ratio, torch.full_like(ratio, factor), Tol(rtol=1e-6)):
                            decayed = (f"; every element was multiplied by {factor:g} = 1 - lr * weight_decay: "
                                       "decayed though it had no gradient")
                        fail(f"{where}: rank {rank}: {scn.NAMES[i]} had .grad None at step {k} (on every rank), "
                             f"yet step() changed it: {problem}{decayed}; torch.optim.AdamW skips a parameter "
                             "without a gradient: no weight decay, no moment update, its step count unchanged")
                before = now


@CHECKS.add("step-counts", "Each parameter keeps its own step count (a parameter first given a gradient at step 3 "
            "uses t = 1 then, split between ranks or not): with gradients missing, the owned elements still equal "
            "torch.optim.AdamW's")
def step_counts(ctx):
    judge_math(ctx, ("none",), ("shared-step", "none-as-zero", "none-decayed", "summed", "coupled"))


# -- what every rank holds ------------------------------------------------------------------------

def stale_text(steps: list[list[dict]], k: int, start: torch.Tensor, run, world: int) -> str:
    """Which ranks left the elements outside their own range exactly as they were before step k + 1."""
    stale = []
    for local, mine in enumerate(steps):
        before = start if k == 0 else scn.from_record(mine[k - 1]["params"], run[0])
        now = scn.from_record(mine[k]["params"], run[0])
        lo, hi = scn.owned(local, world)
        outside = torch.cat([now[:lo] != before[:lo], now[hi:] != before[hi:]])
        if not bool(outside.any()) and bool((now[lo:hi] != before[lo:hi]).any()):
            stale.append(local)
    if not stale:
        return ""
    return (f"; on local rank{'s' if len(stale) > 1 else ''} {listed(stale)} only the rank's own range moved, every "
            "other element is exactly as before the step: the updated ranges were never exchanged")


def identical_problem(records: list[dict], run, where: str, world: int, ranks: list[int] | None = None,
                      start: torch.Tensor | None = None):
    ranks = ranks or list(range(world))
    steps = [steps_of(r, where, rank) for r, rank in zip(records, ranks)]
    for k in range(min(len(s) for s in steps)):
        first = scn.from_record(steps[0][k]["params"], run[0])
        for other, rank in zip(steps[1:], ranks[1:]):
            seen = scn.from_record(other[k]["params"], run[0])
            problem = mismatch(seen, first, EXACT, what="elements", against=f"rank {ranks[0]}'s",
                               yours=f"rank {rank}'s")
            if problem:
                if start is not None:
                    problem += stale_text(steps, k, start, run, world)
                bad = (seen != first).nonzero().flatten().tolist()
                owners = sorted({next(r for r in range(world) if scn.owned(r, world)[0] <= i < scn.owned(r, world)[1])
                                 for i in bad})
                return (f"after step {k + 1}, rank {rank}'s parameters differ from rank {ranks[0]}'s: {problem}; "
                        f"the differing elements lie in the range{'s' if len(owners) > 1 else ''} of local "
                        f"rank{'s' if len(owners) > 1 else ''} {listed(owners)} ({listed(bad, 3)}): each rank must "
                        "send its updated range to every other (all-gather, or a broadcast from each owner)")
    return None


@CHECKS.add("ranks-identical", "After every step, the parameters are identical on every rank, every element of "
            "them")
def ranks_identical(ctx):
    require_a_step(ctx, "the ranks agree only because nothing moved")
    for index, run, where, ranks in runs(ctx):
        problem = identical_problem(ranks, run, where, scn.WORLD, start=truth(ctx, index).start)
        if problem:
            fail(f"{where}: {problem}")


# -- what the optimizer keeps ---------------------------------------------------------------------

@CHECKS.add("state-size", "state_numel() is 2 x the size of the rank's range once step() has run: 62 on rank 0, "
            "60 on rank 1")
def state_size(ctx):
    for index, run, where, ranks in runs(ctx):
        for rank, record in enumerate(ranks):
            start, end = scn.owned(rank)
            for k, step in enumerate(steps_of(record, where, rank), start=1):
                numel = step["state_numel"]
                if numel != 2 * (end - start):
                    why = ""
                    if numel == 2 * scn.N:
                        why = (f": that is 2 x all {scn.N} elements, Adam's moments for every parameter; ZeRO-1 "
                               "keeps them for this rank's range only")
                    elif numel == end - start:
                        why = ": one moment's worth; exp_avg and exp_avg_sq both count"
                    fail(f"{where}: rank {rank}: state_numel() after step {k} returned {numel}; expected "
                         f"2 x {end - start} = {2 * (end - start)} (exp_avg and exp_avg_sq of its {owned_text(rank)})"
                         f"{why}")


@CHECKS.add("memory-bound", "After every step, the tensors reachable from the optimizer (not a parameter's or a "
            "gradient's storage) hold at most 3 x the rank's range: 93 elements on rank 0, 90 on rank 1")
def memory_bound(ctx):
    require_a_step(ctx, "the optimizer's memory after a step cannot be judged")
    for index, run, where, ranks in runs(ctx):
        for rank, record in enumerate(ranks):
            start, end = scn.owned(rank)
            limit = 3 * (end - start)
            for k, step in enumerate(steps_of(record, where, rank), start=1):
                memory = step["memory"]
                if memory["total"] > limit:
                    shown = "; ".join(f"{e['where']} {tuple(e['shape'])} in a storage of {e['elements']}"
                                      for e in memory["largest"])
                    full = [e for e in memory["largest"] if e["elements"] >= scn.N]
                    why = (f"; {full[0]['where']} is a full-size buffer ({full[0]['elements']} >= all {scn.N} "
                           "elements) kept between steps: make flat gradients or parameter copies inside step() "
                           "and let them go" if full else "")
                    fail(f"{where}: rank {rank}: after step {k}, the optimizer holds {memory['total']} elements "
                         f"beyond the parameters and gradients, more than 3 x {end - start} = {limit} (the two "
                         f"moments of its {owned_text(rank)}, and room for one more): the largest: {shown}{why}")


@CHECKS.add("zero-grad", "zero_grad() sets every parameter's .grad to None; zero_grad(set_to_none=False) zeroes "
            "them in place")
def zero_grad(ctx):
    judged = 0
    for index, run, where, ranks in runs(ctx):
        to_none = scn.set_to_none(run)
        want = "none" if to_none else "zero"
        for rank, record in enumerate(ranks):
            steps = steps_of(record, where, rank)
            seen = [(f"before step {k}", s["zero_grad"]) for k, s in enumerate(steps, start=1) if s["zero_grad"]]
            seen.append(("after the last step", record.get("final_zero_grad")))
            for when, states in seen:
                if states is None:
                    continue
                judged += 1
                wrong = [(scn.NAMES[i], s) for i, s in enumerate(states) if s != want]
                if wrong:
                    got = {"none": "None", "zero": "a tensor of zeros", "nonzero": "a tensor not all zero"}
                    fail(f"{where}: rank {rank}: {when}, zero_grad(set_to_none={to_none}) left "
                         f"{len(wrong)} of {len(states)} parameters' .grad not "
                         f"{'None' if to_none else 'zeroed'}: {listed([f'{n}: {got[s]}' for n, s in wrong], 3)}; "
                         "every parameter, owned by this rank or not, is reset")
    if not judged:
        nothing_to_check("no run reached zero_grad after a step")


@CHECKS.add("own-optimizer", "No ZeroRedundancyOptimizer, and no torch.optim optimizer built over the full "
            "parameters: only over this rank's own pieces")
def own_optimizer(ctx):
    require_a_step(ctx, "what the steps were taken with cannot be judged")
    for index, run, where, ranks in runs(ctx):
        for rank, record in enumerate(ranks):
            for built in record["optimizers"]:
                if "ZeroRedundancyOptimizer" in built["bases"]:
                    fail(f"{where}: rank {rank} built a torch.distributed.optim.ZeroRedundancyOptimizer (over "
                         f"{built['tensors']} tensors): the exercise is to write ZeRO-1 yourself; it also shards by "
                         f"whole parameters, not into the {owned_text(rank)} the contract gives each rank")
                if built["full"]:
                    fail(f"{where}: rank {rank} built a {built['module']}.{built['type']} over {built['full']} of the "
                         f"{len(scn.SHAPES)} full parameters: it keeps moments for all {scn.N} elements on every "
                         "rank; an optimizer over this rank's own pieces (new tensors, or views of the parameters "
                         "inside its range) is the ZeRO-1 way")


# -- the group -----------------------------------------------------------------------------------

@CHECKS.add("process-group", f"On {scn.GROUP_WORLD} ranks split into groups {scn.GROUPS[0]} and {scn.GROUPS[1]}, "
            "each group steps its own parameters: every collective runs on `group`, and a broadcast's src is a "
            "global rank")
def process_group(ctx):
    launch = launched(ctx, scn.GROUP_WORLD)
    for index, run in enumerate(scn.GROUP_RUNS):
        records = launch.run(index, GROUP_KEYS[index])
        seeds = [scn.seed_of(index, g + 1) for g in range(len(scn.GROUPS))]
        for g, members in enumerate(scn.GROUPS):
            where = (f"{scn.GROUP_WORLD} ranks in groups {scn.GROUPS[0]} and {scn.GROUPS[1]}, {scn.describe(run)}: "
                     f"group {members}")
            for rank in members:
                error = records[rank].get("error")
                if error:
                    hint = ""
                    if "broadcast" in error["message"] or "not part of group" in error["message"].lower():
                        hint = (f"; dist.broadcast(src=...) takes a global rank even with a group: local rank 0 of "
                                f"group {members} is global rank {members[0]}; pass group_src= or "
                                "dist.get_global_rank(group, local)")
                    text = (f"{where}: rank {rank} (local rank {members.index(rank)}), in {error['stage']}: "
                            f"{error['message']}")
                    if not hint:
                        raise launcher.RankFailure(text)
                    fail(text + hint)
            t = ctx.cached(("group-truth", index, g), lambda: truth_of.Truth(run, seeds[g]))
            for rank in members:
                local = members.index(rank)
                for k, step in enumerate(records[rank]["steps"], start=1):
                    seen = scn.from_record(step["params"], run[0])
                    problem = owned_problem(seen, t.right[k - 1], local, run[0])
                    if problem:
                        wide = truth_of.default_group_trajectory(run, seeds, g, len(members))[k - 1]
                        s, e = scn.owned(local)
                        why = ""
                        if is_close(seen[s:e], wide[s:e], TOLS[run[0]]):
                            why = (f"; they match AdamW on all {scn.GROUP_WORLD} ranks' gradients summed (both "
                                   "groups') and divided by 2: the all-reduce ran on the default group; pass "
                                   "group=group to every collective")
                        else:
                            why = cause(t, seen, k, local, ("summed", "own", "coupled", "shared-step", "none-as-zero",
                                                            "none-decayed"))
                        fail(f"{where}: rank {rank} (local rank {local}), after step {k}, in its "
                             f"{owned_text(local)}: {problem}{why}")
            problem = identical_problem([records[r] for r in members], run, where, len(members), members, t.start)
            if problem:
                fail(f"{where}: {problem}; with a group, a broadcast's src is the owner's global rank")
