"""Behavioural checks for tensor_parallel: run the learner's shard_mlp on real gloo ranks (launch.py,
rank.py), 2 on the default group for every run of scenarios.py and 4 split into two groups for the
group check, and compare what each rank recorded with the unsharded MLP computed here (truth.py)."""

from __future__ import annotations

from pathlib import Path

import torch
import torch._dynamo  # noqa: F401 - the ranks' TorchDispatchMode imports it on first use: once here, not per rank

from quizapp.checking import launch as launcher
from quizapp.checking.harness import (
    EXACT,
    Checks,
    CheckSkipped,
    Required,
    Tol,
    cause_if,
    consequence,
    fail,
    is_close,
    listed,
    mismatch,
    nothing_to_check,
    plural,
    sibling_module,
)

HERE = Path(__file__).resolve().parent
scn = sibling_module(__file__, "scenarios")
truth_of = sibling_module(__file__, "truth")
shards = sibling_module(__file__, "shards")
causes = sibling_module(__file__, "causes")
SHARDS = shards.SHARDS

# The contract's tolerances, element by element, for outputs and gradients against the unsharded MLP
# run on the same rank. A sharded MLP adds the hidden units' products in two partial sums instead of
# one: the reference and both correct alternatives were measured off by at most 1.8e-15 (float64) and
# 9.5e-7 (float32), a hundred thousand and ten times inside. The smallest real mistake, the tanh GELU,
# moves some output of every run by 3.7e-4 or more.
TOLS = {"float64": Tol(rtol=1e-10, atol=1e-10), "float32": Tol(rtol=1e-4, atol=1e-5)}

# The ranks' gloo process group talks over localhost TCP on ports the kernel picks.
NEEDS_LOCAL_TCP = True

CHECKS = Checks(Required(
    "shard_mlp", "(fc1: nn.Linear, fc2: nn.Linear, *, rank: int, world_size: int, group=None) -> nn.Module",
    sample_args=(None, None), sample_kwargs={"rank": 0, "world_size": 2, "group": None},
))

KEYS = [scn.run_key(run) for run in scn.RUNS] + [scn.INDIVISIBLE_KEY]
GROUP_KEYS = [f"group/{scn.run_key(run)}" for run in scn.GROUP_RUNS]


# -- the launches and what they recorded -----------------------------------------------------

def launched(ctx, world: int = scn.WORLD):
    """One launch of `world` ranks makes every run of that world; every check reads from it."""

    def go():
        backend, devices = launcher.choose_backend(ctx.device.type, world,
                                                   torch.cuda.device_count() if ctx.device.type == "cuda" else 0)
        # A CUDA context does not survive a fork: spawn the ranks then, fork them otherwise.
        fork = backend == "gloo" and not torch.cuda.is_initialized()
        return launcher.launch(HERE, ctx.solution, world=world, backend=backend, devices=devices,
                               runs=KEYS if world == scn.WORLD else GROUP_KEYS, fork=fork)

    return ctx.cached(("launch", world), go)


def ranks_of(ctx, index: int) -> list[dict]:
    """Every rank's record of 2-rank run `index` (RankFailure, a check error, if there is none)."""
    return launched(ctx).run(index, KEYS[index])


def truth(ctx, index: int) -> truth_of.Truth:
    return ctx.cached(("truth", index), lambda: truth_of.unsharded(scn.RUNS[index], scn.seed_of(index)))


def reached(record: dict, who: str, stage: str) -> None:
    """Raise the learner's error of this run, as a check error, if the run stopped before `stage` ended."""
    error = record.get("error")
    if error and STAGES.index(error["stage"]) <= STAGES.index(stage):
        raise launcher.RankFailure(f"{who}, in {error['stage']}: {error['message']}")


STAGES = ["shard_mlp", "reading the module", "forward", "backward", "the SGD step"]


def runs(ctx):
    """(index, where, every rank's record) of each 2-rank run on the default group."""
    for index, run in enumerate(scn.RUNS):
        yield index, scn.describe(run), ranks_of(ctx, index)


def collectives_text(seen: list[dict]) -> str:
    if not seen:
        return "no collective"
    kinds: dict[str, list[int]] = {}
    for c in seen:
        kinds.setdefault(c["kind"], []).append(int(c.get("elements") or 0))
    return ", ".join(f"{plural(len(sizes), kind)} (of {and_list(sizes)} elements)" for kind, sizes in kinds.items())


def and_list(items) -> str:
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


# -- the shards --------------------------------------------------------------------------------

@CHECKS.add("shard-slices", "m holds, as its only parameters, this rank's slices: fc1.weight[rows], fc1.bias[rows], "
            "fc2.weight[:, rows] and the whole fc2.bias")
def shard_slices(ctx):
    for index, where, ranks in runs(ctx):
        for rank, record in enumerate(ranks):
            reached(record, f"{where}: rank {rank}", "reading the module")
            problem = shards.module_problems(record, truth(ctx, index), rank, shards.fulls_of(index))
            if problem:
                fail(f"{where}: rank {rank} (rows = {shards.rows_text(rank)}): {problem}")


@CHECKS.add("shards-are-copies", "The shards share no storage with fc1 and fc2")
def shards_are_copies(ctx):
    held = 0
    for index, where, ranks in runs(ctx):
        for rank, record in enumerate(ranks):
            reached(record, f"{where}: rank {rank}", "reading the module")
            for name, entry in record["module"]["shards"].items():
                held += "tensor" in entry
                if entry.get("shares"):
                    given = entry["shares"][0]
                    fail(f"{where}: rank {rank}: m.{name} shares storage with the given {given} "
                         f"{tuple(shards.fulls_of(index)[given].shape)}: a slice such as {given}[rows] is a view, and "
                         "nn.Parameter(view) keeps its memory, so an optimizer step on m writes into the given layer; "
                         "copy it with .detach().clone()")
    if not held:
        nothing_to_check("m held no shard tensors in any run")


@CHECKS.add("rejects-indivisible", f"h not divisible by world_size (h = {scn.ODD_HIDDEN}, 2 ranks): ValueError, "
            "raised before any communication")
def rejects_indivisible(ctx):
    index = len(scn.RUNS)
    words = f"fc1 with h = {scn.ODD_HIDDEN} hidden units on world_size = {scn.WORLD}"
    for rank, record in enumerate(launched(ctx).run(index, KEYS[index])):
        outcome = record["outcome"]
        if outcome["raised"] is None:
            fail(f"{words}: rank {rank}'s shard_mlp returned (an object of type {outcome['returned']}) instead of "
                 f"raising ValueError: "
                 f"{scn.ODD_HIDDEN} hidden units cannot be split evenly over {scn.WORLD} ranks")
        if not outcome["value_error"]:
            fail(f"{words}: rank {rank}'s shard_mlp raised {outcome['raised']} instead of ValueError (an assert "
                 f"raises AssertionError, and is skipped under python -O): {outcome['message']}")
        if record["collectives"]:
            fail(f"{words}: rank {rank}'s shard_mlp issued {collectives_text(record['collectives'])} before raising; "
                 "check h % world_size before any communication")


# -- forward -----------------------------------------------------------------------------------

def output_problem(record: dict, t: truth_of.Truth, rank: int, dtype: str) -> str | None:
    out = record["output"]
    if "tensor" not in out:
        return f"m(x) returned a {out['type']}; expected a tensor of shape {tuple(t.output.shape)}"
    seen = scn.from_record(out["tensor"])
    problem = mismatch(seen, t.output, TOLS[dtype], exact_dtype=True, what="outputs", against="the unsharded MLP's")
    if problem:
        return problem + causes.output_cause(seen, t, rank, TOLS[dtype])
    return None


def fails(ctx, check) -> bool:
    """Whether one of the 2-rank checks fails (or stops on an error): a later failure may follow from it."""

    def go():
        try:
            check(ctx)
        except CheckSkipped:
            return False
        except Exception:  # noqa: BLE001 - a failure or an error: either way the cause may lie there
            return True
        return False

    return ctx.cached(("fails", check.__name__), go)


def follows(ctx, check, condition: bool = True):
    """Point a failure at `check` when that check fails too."""
    title = next(c.title for c in CHECKS.checks if c.run is check)
    return cause_if(condition and fails(ctx, check), consequence(title))


@CHECKS.add("forward-output", "m(x) equals fc2(gelu(fc1(x))) (exact GELU) on every rank, in the layers' dtype")
def forward_output(ctx):
    for index, where, ranks in runs(ctx):
        for rank, record in enumerate(ranks):
            reached(record, f"{where}: rank {rank}", "forward")
            problem = output_problem(record, truth(ctx, index), rank, scn.RUNS[index][0])
            if problem:
                fail(f"{where}: rank {rank}'s m(x): {problem}")


@CHECKS.add("forward-communication", "shard_mlp communicates nothing; each forward issues exactly one all-reduce "
            "and no other collective")
def forward_communication(ctx):
    for index, where, ranks in runs(ctx):
        for rank, record in enumerate(ranks):
            reached(record, f"{where}: rank {rank}", "forward")
            setup = record["shard_collectives"]
            if setup:
                fail(f"{where}: rank {rank}'s shard_mlp issued {collectives_text(setup)}; it needs no communication: "
                     "every rank was handed the whole fc1 and fc2 and slices its own part")
            seen = record["forward_collectives"]
            kinds = [c["kind"] for c in seen]
            if kinds == ["all-reduce"]:
                continue
            if not kinds:
                why = (f"so the {scn.WORLD} ranks' partial outputs were never summed: g all-reduces (sums) them, "
                       "once per forward")
            elif "all-gather" in kinds:
                why = (f"gathering full weights or activations moves and stores h x (in + out) numbers per rank; "
                       f"Megatron's MLP exchanges only the (..., {scn.OUT}) partial output, in one all-reduce")
            elif kinds.count("all-reduce") > 1:
                why = "one all-reduce, of the row-parallel layer's partial output, is all the forward needs"
            else:
                why = "the forward needs one all-reduce (sum) of the partial outputs and nothing else"
            fail(f"{where}: rank {rank}'s forward issued {collectives_text(seen)}; expected exactly 1 all-reduce: "
                 f"{why}")


# -- backward ------------------------------------------------------------------------------------

def backward_runs(ctx, needs_x_grad: bool = False):
    """(index, where, rank, record) of each run and rank whose backward ran: a run whose output could
    not give a loss (wrong shape, not a tensor) is the forward check's; one that does not require grad
    fails here."""
    count = 0
    reason = None
    for index, where, ranks in runs(ctx):
        if needs_x_grad and not scn.RUNS[index][3]:
            continue
        for rank, record in enumerate(ranks):
            reached(record, f"{where}: rank {rank}", "backward")
            if "no_backward" in record:
                if "require grad" in record["no_backward"]:
                    fail(f"{where}: rank {rank}: {record['no_backward']}")
                reason = reason or f"{record['no_backward']} ({where})"
                continue
            count += 1
            yield index, where, rank, record
    if not count:
        nothing_to_check(f"no backward ran: {reason}")


@CHECKS.add("weight-gradients", "Every shard's .grad equals its slice of the unsharded MLP's gradient "
            "(m.fc2.bias.grad: all of it, on every rank)")
def weight_gradients(ctx):
    with follows(ctx, forward_output):
        for index, where, rank, record in backward_runs(ctx):
            t, tol = truth(ctx, index), TOLS[scn.RUNS[index][0]]
            for name in SHARDS:
                expected, got = t.grads[rank][name], record["grads"][name]
                if expected is None or got is None:
                    continue  # no such bias, or no such shard: the shard check's to say
                if got["grad"] is None:
                    fail(f"{where}: rank {rank}: m.{name}.grad is None after backward(); the loss depends on it")
                seen = scn.from_record(got["grad"])
                problem = mismatch(seen, expected, tol, what="gradient entries", against="the unsharded MLP's")
                if problem:
                    cause = causes.gradient_cause(name, seen, expected, t)
                    fail(f"{where}: rank {rank}: m.{name}.grad: {problem}{cause}")


@CHECKS.add("input-gradient", "x.grad equals the unsharded MLP's x.grad on every rank (f all-reduces it in backward)")
def input_gradient(ctx):
    with follows(ctx, forward_output):
        for index, where, rank, record in backward_runs(ctx, needs_x_grad=True):
            t, tol = truth(ctx, index), TOLS[scn.RUNS[index][0]]
            if record["x_grad"] is None:
                fail(f"{where}: rank {rank}: x.grad is None after backward(), though x requires grad")
            seen = scn.from_record(record["x_grad"])
            problem = mismatch(seen, t.x_grad, tol, what="x.grad entries", against="the unsharded MLP's")
            if problem:
                fail(f"{where}: rank {rank}: x.grad: {problem}{causes.x_grad_cause(seen, t, rank, tol)}")


@CHECKS.add("backward-communication", "A backward issues exactly one all-reduce when x requires grad, none otherwise")
def backward_communication(ctx):
    for index, where, rank, record in backward_runs(ctx):
        seen = record["backward_collectives"]
        kinds = [c["kind"] for c in seen]
        if scn.RUNS[index][3]:
            if kinds == ["all-reduce"]:
                continue
            if not kinds:
                why = (f"f's backward sums x's gradient over the {scn.WORLD} ranks, whose fc1 shards each give "
                       "only their own hidden units' part of it: the backward's one collective")
            elif kinds.count("all-reduce") == len(kinds):
                why = ("one is f's, of x's gradient; g's backward must be the identity (a differentiable "
                       "all-reduce used as g all-reduces the output's gradient again)")
            else:
                why = "the backward's one collective is f's all-reduce of x's gradient"
            fail(f"{where}: rank {rank}'s backward issued {collectives_text(seen)}; expected exactly 1 all-reduce: "
                 f"{why}")
        elif kinds:
            fail(f"{where}: rank {rank}'s backward issued {collectives_text(seen)}; expected none: x does not require "
                 "grad, so f has nothing to sum, and g's backward is the identity (a differentiable all-reduce used "
                 "as g all-reduces the output's gradient)")


# -- the originals -----------------------------------------------------------------------------

@CHECKS.add("originals-untouched", "fc1 and fc2 are left as they were, after a backward and an SGD step on m, and "
            "get no .grad")
def originals_untouched(ctx):
    stepped = 0
    for index, where, ranks in runs(ctx):
        fc1, fc2 = scn.build_layers(scn.RUNS[index], scn.seed_of(index))
        layers = {"fc1": fc1, "fc2": fc2}
        for rank, record in enumerate(ranks):
            reached(record, f"{where}: rank {rank}", "shard_mlp")
            stepped += bool(record.get("stepped"))
            now = record["originals"]
            shares = [n for n, e in record.get("module", {}).get("shards", {}).items() if e.get("shares")]
            after = " after the SGD step on m" if record.get("stepped") else ""
            for layer, (n_in, n_out) in now["features"].items():
                want = (layers[layer].in_features, layers[layer].out_features)
                if (n_in, n_out) != want:
                    fail(f"{where}: rank {rank}: {layer} now maps {n_in} -> {n_out} features, it was given as "
                         f"{want[0]} -> {want[1]}: shard_mlp builds new layers and leaves fc1 and fc2 as they were")
            if now["replaced"]:
                fail(f"{where}: rank {rank}: {listed(now['replaced'])} of the given layers "
                     f"{'was' if len(now['replaced']) == 1 else 'were'} replaced by other tensors (of "
                     f"{len(now['replaced'])} parameters); leave fc1 and fc2 as they were")
            for name in SHARDS:
                given = getattr(layers[name.split('.')[0]], name.split('.')[1])
                value = now["values"][name]
                expected = None if given is None else given.detach()
                if (value is None) != (expected is None):
                    fail(f"{where}: rank {rank}: {name} is now {'None' if value is None else 'a tensor'}; it was "
                         f"{'None' if expected is None else f'a tensor of shape {tuple(expected.shape)}'}")
                if value is None:
                    continue
                problem = mismatch(scn.from_record(value), expected, EXACT, what="entries", against="the values given",
                                   yours="now")
                if problem:
                    cause = (f": m.{shares[0]} shares its storage, so the step on m wrote into it" if shares else "")
                    fail(f"{where}: rank {rank}: {name} changed{after}: {problem}{cause}")
            if now["grads"]:
                fail(f"{where}: rank {rank}: {listed(now['grads'])} got a .grad from the backward of m (of "
                     f"{len(SHARDS)} parameters): the originals must take no part in m's graph")
    if not stepped:
        nothing_to_check("no SGD step ran on m's parameters in any run (m has none, or no backward ran)")


# -- the group -----------------------------------------------------------------------------------

def group_truths(ctx, index: int) -> list:
    run = scn.GROUP_RUNS[index]
    return ctx.cached(("group-truth", index), lambda: [truth_of.unsharded(run, scn.seed_of(index, g + 1))
                                                      for g in range(len(scn.GROUPS))])


@CHECKS.add("process-group", f"On {scn.GROUP_WORLD} ranks split into groups {scn.GROUPS[0]} and {scn.GROUPS[1]}, "
            "each group's m computes its own MLP: every collective runs on `group`")
def process_group(ctx):
    launch = launched(ctx, scn.GROUP_WORLD)
    for index, run in enumerate(scn.GROUP_RUNS):
        records = launch.run(index, GROUP_KEYS[index])
        for rank, record in enumerate(records):
            judge_group_rank(ctx, index, run, rank, record)


def judge_group_rank(ctx, index: int, run, rank: int, record: dict) -> None:
    g = next(i for i, members in enumerate(scn.GROUPS) if rank in members)
    members, tol = scn.GROUPS[g], TOLS[run[0]]
    local, t = members.index(rank), group_truths(ctx, index)[g]
    seeds = [scn.seed_of(index, k + 1) for k in range(len(scn.GROUPS))]
    where = (f"{scn.GROUP_WORLD} ranks in groups {scn.GROUPS[0]} and {scn.GROUPS[1]}, {scn.describe(run)}: rank {rank} "
             f"(rank {local} of group {members}, world_size {len(members)})")
    reached(record, where, "backward")
    with follows(ctx, shard_slices):
        problem = shards.module_problems(record, t, local, shards.fulls_of(index, seeds[g], run))
        if problem:
            fail(f"{where}: {problem}")
    sizes = {c["group_size"] for c in record["forward_collectives"] + record.get("backward_collectives", [])}
    wide = sorted(n for n in sizes if n and n != len(members))
    stray = (f"; its collectives ran over {listed(wide)} ranks, the default group's, not the {len(members)} of "
             "`group`: pass group=group to every collective" if wide else "")
    problem = output_problem(record, t, local, run[0])
    if problem:
        everyone = truth_of.default_group_outputs(run, seeds, len(members))[g]
        if "tensor" in record["output"] and is_close(scn.from_record(record["output"]["tensor"]), everyone, tol):
            problem += (f"; it is the sum of all {scn.GROUP_WORLD} ranks' partial outputs, both groups': the "
                        "all-reduce ran on the default group instead of `group`")
        with follows(ctx, forward_output, not wide):
            fail(f"{where}: m(x): {problem}{stray}")
    if "x_grad" not in record:
        fail(f"{where}: no backward ran: {record.get('no_backward')}")
    seen = scn.from_record(record["x_grad"])
    problem = mismatch(seen, t.x_grad, tol, what="x.grad entries", against="the unsharded MLP's")
    if problem:
        if is_close(seen, truth_of.default_group_x_grads(run, seeds, len(members))[g], tol):
            problem += (f"; it is the sum of all {scn.GROUP_WORLD} ranks' shares, both groups': f's backward "
                        "all-reduce ran on the default group instead of `group`")
        with follows(ctx, input_gradient, not wide):
            fail(f"{where}: x.grad: {problem}{stray}")
    for name in SHARDS:
        expected, got = t.grads[local][name], record["grads"][name]
        if expected is None or got is None or got["grad"] is None:
            continue
        problem = mismatch(scn.from_record(got["grad"]), expected, tol, what="gradient entries",
                           against="the unsharded MLP's")
        if problem:
            with follows(ctx, weight_gradients, not wide):
                fail(f"{where}: m.{name}.grad: {problem}{stray}")
