"""The runs magnitude_pruning's checks judge: the learner's functions applied to fresh models, and
the training that follows, each run once per grade (ctx.cached) and shared by the checks."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from quizapp.checking.harness import sibling_module

nets = sibling_module(__file__, "nets")

AMOUNT = 0.5
FIRST, SECOND = 0.3, 0.5  # iterative pruning: 30 %, then half of the 70 % left = 65 % in all
PRE_STEPS, STEPS, BETWEEN = 2, 4, 3
TOTAL = 1881  # Linear/Conv2d weights of nets.Net: 45 + 180 + 1536 + 120
OPTIMIZERS = ("SGD-momentum", "AdamW")
WHEN = {"new": "after the pruning", "state": f"before the pruning, with {PRE_STEPS} steps behind it"}
PRUNE_TEXT = {"global": f"prune_global(model, {AMOUNT})",
              "channels": "prune_channels(model.conv, 0.5), prune_channels(model.fc, 0.25)"}


def prune(solution, model, kind, amount=AMOUNT):
    if kind == "global":
        return solution.prune_global(model, amount)
    solution.prune_channels(model.conv, 0.5)
    solution.prune_channels(model.fc, 0.25)
    return None


# -- one call of prune_global on a fresh model -----------------------------------------------

@dataclass
class PruneRun:
    returned: object
    seen: object      # nets.Seen: the first forward pass after the call
    originals: dict   # every weight and bias before the call
    after: dict       # every weight and bias as the modules show them after that forward
    names: list


def prune_run(ctx, amount, small_others=False) -> PruneRun:
    def go():
        with nets.one_thread():
            model = nets.build(nets.Net, ctx.device, small_others=small_others)
            originals = nets.values(model)
            with ctx.given(f"prune_global(model, {amount!r}) on a fresh model"):
                returned = ctx.solution.prune_global(model, amount)
            _, seen = nets.forward(model, nets.data(ctx.device)[0])
            return PruneRun(returned, seen, originals, nets.values(model), [n for n, _ in nets.layers(model)])

    return ctx.cached(("prune", amount, small_others), go)


def lost(run: PruneRun, biases: bool) -> list[tuple[str, int, int]]:
    """(name, how many values became zero, size) of each bias (biases=True) or other tensor that is not a
    Linear/Conv2d weight (False) which the call changed."""
    targets = {f"{n}.bias" for n in run.names}
    weights = {f"{n}.weight" for n in run.names}
    out = []
    for key, before in run.originals.items():
        if key in weights or (key in targets) != biases:
            continue
        now = run.after.get(key)
        if now is None:
            out.append((key, before.numel(), before.numel()))
        elif not torch.equal(now, before):
            out.append((key, int(((now == 0) & (before != 0)).sum()), before.numel()))
    return out


# -- pruning, then training ------------------------------------------------------------------

@dataclass
class TrainRun:
    names: list
    seen: list            # forward 0 right after pruning, then one after every optimizer step
    truth: list | None    # the same with torch.nn.utils.prune masks in the learner's places
    extra_trainable: list  # trainable tensors of pruned layers besides the weight and bias


def train_run(ctx, opt_name, when, kind="global") -> TrainRun:
    """Prune (after PRE_STEPS steps of the optimizer when `when` is "state"), then train STEPS steps."""
    def run(model, pruning):
        x, y = nets.data(ctx.device, type(model))
        opt = nets.make_optimizer(opt_name, model.parameters()) if when == "state" else None
        if opt is not None:
            nets.train(model, opt, PRE_STEPS, x, y)
        originals = nets.values(model)
        pruning(model)
        pruned = nets.values(model)
        opt = opt or nets.make_optimizer(opt_name, model.parameters())
        return originals, pruned, nets.train(model, opt, STEPS, x, y) + [nets.forward(model, x)[1]]

    def go():
        net = nets.Net if kind == "global" else nets.ChannelNet
        with nets.one_thread():
            model = nets.build(net, ctx.device)
            with ctx.given(f"{PRUNE_TEXT[kind]}, optimizer {nets.OPT_TEXT[opt_name]} made {WHEN[when]}"):
                originals, pruned, seen = run(model, lambda m: prune(ctx.solution, m, kind))
            names = [n for n, _ in nets.layers(model)]
            ours = {"weight", "weight_orig", "bias", "original"}  # "original": a parametrization's
            extra = [f"{n}.{p}" for n, m in nets.layers(model) for p, t in m.named_parameters()
                     if p.split(".")[-1] not in ours and t.requires_grad]
            truth = None
            if kind == "global":
                pruned.update({f"{n}.weight": w for n, w in zip(names, seen[0].used)})
                truth = run(nets.build(net, ctx.device), lambda m: nets.mirror(m, originals, pruned))[2]
            return TrainRun(names, seen, truth, extra)

    return ctx.cached(("train", opt_name, when, kind), go)


def regrowth(run: TrainRun):
    """The first forward pass that used (or showed in module.weight) a non-zero value where the first
    forward after pruning had a zero: (index, layer, how many, of how many, largest, "used" | "read")."""
    first = run.seen[0]
    pruned = [(u == 0) | (r == 0) for u, r in zip(first.used, first.read)]
    for i, s in enumerate(run.seen):
        for name, mask, used, read in zip(run.names, pruned, s.used, s.read):
            for kind, w in (("used", used), ("read", read)):
                bad = w[mask] != 0
                if bool(bad.any()):
                    return i, name, int(bad.sum()), int(mask.sum()), w[mask].abs().max().item(), kind
    return None


# -- a second call ---------------------------------------------------------------------------

@dataclass
class SecondRun(PruneRun):
    first: object = None    # the forward pass right after the first call
    before: object = None   # the forward pass right before the second call, after training


SECOND_TEXT = f"prune_global(model, {FIRST}), {BETWEEN} AdamW steps, then prune_global(model, {SECOND})"


def second_run(ctx) -> SecondRun:
    def go():
        with nets.one_thread():
            model = nets.build(nets.Net, ctx.device)
            x, y = nets.data(ctx.device)
            originals = nets.values(model)
            with ctx.given(SECOND_TEXT):
                ctx.solution.prune_global(model, FIRST)
                trained = nets.train(model, nets.make_optimizer("AdamW", model.parameters()), BETWEEN, x, y)
                _, before = nets.forward(model, x)
                returned = ctx.solution.prune_global(model, SECOND)
            _, seen = nets.forward(model, x)
            return SecondRun(returned, seen, originals, nets.values(model), [n for n, _ in nets.layers(model)],
                             trained[0], before)

    return ctx.cached("second", go)


@dataclass
class StaleRun:
    seen: object          # the forward pass after the second call
    last_forward: object  # the last training forward, one optimizer step before the second call


STALE_TEXT = (f"prune_global(model, {FIRST}), {BETWEEN} AdamW steps, then prune_global(model, {SECOND}) with no "
              "forward pass after the last step")


def stale_run(ctx) -> StaleRun:
    """second_run without the forward pass before the second call: the same model, data and steps, so the
    values that forward saw in second_run are the ones this second call must rank."""
    def go():
        with nets.one_thread():
            model = nets.build(nets.Net, ctx.device)
            x, y = nets.data(ctx.device)
            with ctx.given(STALE_TEXT):
                ctx.solution.prune_global(model, FIRST)
                trained = nets.train(model, nets.make_optimizer("AdamW", model.parameters()), BETWEEN, x, y)
                ctx.solution.prune_global(model, SECOND)
            _, seen = nets.forward(model, x)
            return StaleRun(seen, trained[-1])

    return ctx.cached("stale", go)


# -- prune_channels on single layers ---------------------------------------------------------

def channel_runs(ctx) -> list:
    """(case, weight before, weight the forward then used, bias before, bias after) per case."""
    def go():
        out = []
        with nets.one_thread():
            for case in nets.channel_cases(ctx.device):
                before, bias = case.layer.weight.detach().clone(), case.layer.bias.detach().clone()
                with ctx.given(f"prune_channels({case.label})"):
                    ctx.solution.prune_channels(case.layer, case.amount)
                used = nets.layer_forward(case.layer, case.x)
                out.append((case, before, used, bias, case.layer.bias.detach().clone()))
        return out

    return ctx.cached("channels", go)


# -- make_permanent --------------------------------------------------------------------------

PERMANENT = {
    "global": f"prune_global(model, {FIRST}), {BETWEEN} AdamW steps, make_permanent(model)",
    "channels": "prune_channels(model.conv, 0.5), prune_channels(model.fc, 0.25) (model.out never pruned), "
                f"{BETWEEN} AdamW steps, make_permanent(model)",
}


@dataclass
class PermanentRun:
    names: list
    trained: list         # the training forward passes
    final: object         # the forward pass after make_permanent (in the twin: without it)
    error: str | None     # what make_permanent raised
    problems: list        # what it left behind, per layer
    keys: list            # the state_dict's keys afterwards
    others: dict          # biases and norm parameters after the final forward
    movable: int          # weights zero after make_permanent whose gradient is not
    moved: int            # how many of those one plain SGD step then moved
    train_error: str | None  # what that SGD step raised


def leftovers(module, cls) -> list[str]:
    problems = []
    if type(module) is not cls:
        problems.append(f"is a {type(module).__name__}, not an {cls.__name__} (a parametrization is still registered)")
    weight = module._parameters.get("weight")
    if type(weight) is not nn.Parameter:
        shown = type(getattr(module, "weight", None)).__name__
        problems.append(f"has no nn.Parameter named weight (weight is a {shown})")
    names = {n for n, _ in module.named_parameters()} | {n for n, _ in module.named_buffers()}
    extra = sorted(names - {"weight", "bias"})
    if extra:
        problems.append(f"still holds {', '.join(extra)}")
    hooks = len(module._forward_pre_hooks) + len(module._forward_hooks)
    if hooks:
        problems.append(f"still has {hooks} forward hook{'s' if hooks > 1 else ''}")
    if weight is not None and getattr(weight, "_backward_hooks", None):
        problems.append("has a gradient hook on its weight")
    return problems


def permanent_run(ctx, kind, bake) -> PermanentRun:
    """Prune, train (the last optimizer step comes after the last forward, so a module.weight computed by
    that forward is stale), then make_permanent (`bake`) or not (the twin whose outputs must not change)."""
    def go():
        net = nets.Net if kind == "global" else nets.ChannelNet
        with nets.one_thread():
            model = nets.build(net, ctx.device)
            x, y = nets.data(ctx.device, net)
            classes = {n: type(m) for n, m in nets.layers(model)}
            weights = {f"{n}.weight" for n in classes}
            with ctx.given(PERMANENT[kind]):
                prune(ctx.solution, model, kind, FIRST)
                trained = nets.train(model, nets.make_optimizer("AdamW", model.parameters()), BETWEEN, x, y)
            error = None
            if bake:
                try:
                    ctx.solution.make_permanent(model)
                except Exception as exc:  # noqa: BLE001 - reported by the checks, with the model it failed on
                    error = f"{type(exc).__name__}: {exc}"
            _, final = nets.forward(model, x)
            mods = dict(nets.layers(model))
            problems = [f"{n} {p}" for n in mods for p in leftovers(mods[n], classes[n])] if bake else []
            keys = sorted(model.state_dict())
            others = {k: v for k, v in nets.values(model).items() if k not in weights}
            movable, moved, train_error = sgd_step(model, x, y)
            return PermanentRun(list(mods), trained, final, error, problems, keys, others, movable, moved, train_error)

    return ctx.cached(("permanent", kind, bake), go)


def sgd_step(model, x, y) -> tuple[int, int, str | None]:
    """One plain SGD step: (zero weights with a non-zero gradient, how many of them it moved, an error)."""
    try:
        with nets.UsedWeights(live=True) as mode:
            out = model(x)
        F.mse_loss(out, y).backward()
        movable = [(w.detach() == 0) & (w.grad != 0) if w.grad is not None else torch.zeros_like(w, dtype=torch.bool)
                   for w in mode.weights]
        torch.optim.SGD(model.parameters(), lr=0.1).step()
        _, later = nets.forward(model, x)
    except Exception as exc:  # noqa: BLE001 - what stops training after make_permanent is the finding
        return 0, 0, f"{type(exc).__name__}: {exc}"
    moved = sum(int((w[m] != 0).sum()) for w, m in zip(later.used, movable))
    return sum(int(m.sum()) for m in movable), moved, None
