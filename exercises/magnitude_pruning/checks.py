"""Behavioural checks for magnitude_pruning: prune small models with the learner's functions, record
the weight every forward pass really uses while they train (SGD with momentum and AdamW, made after
the pruning or before it), and compare with the contract's rules and with torch.nn.utils.prune
trained from the same pruned state (the runs themselves are in runs.py)."""

from __future__ import annotations

import math

import torch
from torch import nn

from quizapp.checking.harness import (
    Checks,
    Required,
    Tol,
    cause_if,
    consequence,
    fail,
    is_close,
    listed,
    mismatch,
    nothing_to_check,
    sibling_module,
)

nets = sibling_module(__file__, "nets")
runs = sibling_module(__file__, "runs")
findings = sibling_module(__file__, "findings")
AMOUNT, FIRST, SECOND, TOTAL = runs.AMOUNT, runs.FIRST, runs.SECOND, runs.TOTAL
LAYER_SIZES = [45, 180, 1536, 120]
COUNT_AMOUNTS = (0.3, 0.5, 0.7, 0.0, 1.0)  # 0.5 * 1881 = 940.5 and 0.7 * 1881 = 1316.7 test the rounding
# float32. Every correct way to mask (weight_orig * mask, torch.where, zeroing in place before the
# forward, a parametrization) gives the surviving weights bit-identical updates on the CPU; 1e-5 of
# the layer's largest weight leaves room for other reduction orders on CUDA, while one missed or
# extra update moves a weight by about lr = 1e-2 of it.
RTOL = 1e-5
TOL = Tol(rtol=RTOL, of_largest=True)  # of the tensor's largest entry: a layer's weights, a model's outputs
SPARSITY_TOL = Tol(atol=1e-6)  # a share of a few thousand weights: exact but for float rounding

T_COUNT = "prune_global zeroes round(amount * total) of all Linear and Conv2d weights"
T_RANKING = "One ranking across all layers: the zeroed weights are the smallest |w| of the whole model"
T_BIASES = "Biases are never pruned (prune_global and prune_channels)"
T_ONLY = "Only nn.Linear and nn.Conv2d weights are pruned; BatchNorm and LayerNorm are left alone"
T_NEW = "Pruned weights stay exactly 0 in every forward pass, trained by a new SGD-momentum or AdamW"
T_PLAIN = "make_permanent leaves plain nn.Parameters: no mask, hook or parametrization; unpruned modules left alone"

CHECKS = Checks(
    Required("prune_global", "(model, amount) -> dict[str, float]", sample_args=(None, 0.5)),
    Required("prune_channels", "(module, amount) -> None", sample_args=(None, 0.5)),
    Required("make_permanent", "(model) -> None", sample_args=(None,)),
)


def pcts(values) -> str:
    return "[" + ", ".join(f"{v:.0%}" for v in values) + "]"


def steps_text(i: int) -> str:
    return "right after the pruning" if i == 0 else f"after {i} optimizer step{'s' if i > 1 else ''}"


def regrowth_message(found, when, kind) -> str:
    """Why the pruned weights came back, from [(optimizer, its run)] of the runs in which they did."""
    (opt_name, run), others = found[0], found[1:]
    i, name, count, total, largest, seen = runs.regrowth(run)
    where = f"{runs.PRUNE_TEXT[kind]}, then {nets.OPT_TEXT[opt_name]} made {runs.WHEN[when]}: {steps_text(i)}"
    if seen == "read":
        return (f"{where}, module.weight of {name} read after a forward pass holds non-zero values at {count} of its "
                f"{total} pruned positions (largest |w| {largest:.3g}), though the forward used 0: module.weight must "
                "show what the forward uses")
    text = (f"{where}, the forward pass of {name} used non-zero values for {count} of its {total} pruned weights "
            f"(largest |w| {largest:.3g})")
    for other, other_run in others:
        i, name, count, total, largest, _ = runs.regrowth(other_run)
        text += f"; with {nets.OPT_TEXT[other]}: {count} of {total} in {name} {steps_text(i)} (largest {largest:.3g})"
    text += ": they grew back. "
    if when == "state":
        return text + ("An optimizer that ran before the pruning moves a weight even when its gradient is zero "
                       "(SGD's momentum buffer keeps 0.9x the old velocity each step; AdamW's first moment over the "
                       "root of its second keeps stepping by about lr), so masking the gradient is not enough: apply "
                       "the mask to the weight every forward pass uses")
    if run.extra_trainable:
        return text + (f"The pruned layers have trainable tensors besides weight and bias "
                       f"({listed(run.extra_trainable)}): an optimizer built from model.parameters() trains your mask "
                       "away from 0 and 1, so register it as a buffer (register_buffer), never as a Parameter")
    return text + ("The gradient of a pruned weight is not zero, so zeroing it once is not enough: keep a 0/1 mask and "
                   "apply it in every forward pass (torch.nn.utils.prune recomputes weight = weight_orig * weight_mask "
                   "in a forward pre-hook)")


def pruned(ctx, *kinds: str) -> None:
    """Skip a check of what happens to pruned weights (they stay zero, biases and norms are spared, the
    survivors train, make_permanent keeps them) when the pruning of `kinds` zeroed nothing: an unpruned
    model passes all of that for no merit. Called once the check's own failures are told."""
    zeroed = {"global": lambda: bool(nets.zeros_of(runs.prune_run(ctx, AMOUNT).seen.used).any()),
              "channels": lambda: any(bool((used == 0).any()) for _, _, used, _, _ in runs.channel_runs(ctx))}
    if not any(zeroed[kind]() for kind in kinds):
        calls = {"global": f"prune_global(model, {AMOUNT})", "channels": "prune_channels"}
        nothing_to_check(f"{' and '.join(calls[k] for k in kinds)} zeroed no weight, so nothing was pruned")


# -- prune_global ----------------------------------------------------------------------------

@CHECKS.add("amount-fraction", "amount is a fraction in [0, 1]: an int 1 prunes everything, other numbers raise "
            "ValueError, what is no number TypeError or ValueError")
def amount_fraction(ctx):
    def global_call(amount):
        model = nets.build(nets.Net, ctx.device)
        ctx.solution.prune_global(model, amount)
        return nets.zeros_of(nets.forward(model, nets.data(ctx.device)[0])[1].used)

    def channel_call(amount):
        layer = nets.crafted(nn.Linear(6, 8), 11).to(ctx.device)
        ctx.solution.prune_channels(layer, amount)
        return nets.layer_forward(layer, torch.ones(1, 6, device=ctx.device)) == 0

    for label, call, size in (("prune_global(model, {})", global_call, TOTAL),
                              ("prune_channels(nn.Linear(6, 8), {})", channel_call, 48)):
        for amount in (-0.1, 1.5, 2, -1, float("nan"), "0.5", None):
            where = label.format(repr(amount))
            # a number out of range is a ValueError; for what is no number at all, torch's own pruning
            # raises TypeError, and either one is right
            number = isinstance(amount, (int, float))
            allowed = (ValueError,) if number else (TypeError, ValueError)
            expected = ("ValueError (amount must be a number in [0, 1])" if number
                        else "TypeError or ValueError (amount must be an int or a float)")
            try:
                with nets.one_thread(), ctx.given(where):
                    zeros = call(amount)
            except allowed:
                continue
            except Exception as exc:  # noqa: BLE001 - the wrong exception is the finding
                fail(f"{where}: expected {expected}, got {type(exc).__name__}: {exc}")
            note = (f"; it zeroed {int(zeros.sum())} weights: an int is never a count here"
                    if isinstance(amount, int) else "")
            fail(f"{where}: expected {expected}, but it returned without one{note}")
        for amount, want in ((1, size), (0, 0)):
            where = label.format(amount)
            with nets.one_thread(), ctx.given(where):
                got = int(call(amount).sum())
            if got == want:
                continue
            # the int must do what its float does; whether that count is right is global-count's matter
            with nets.one_thread(), ctx.given(label.format(float(amount))):
                as_float = int(call(float(amount)).sum())
            if got != as_float:
                fail(f"{where}: {got} of {size} weights became zero, where {float(amount)} zeroes {as_float}: an int "
                     f"{amount} means {float(amount)} (torch.nn.utils.prune reads an int as a number of weights: pass "
                     "it float(amount))")


@CHECKS.add("global-count", T_COUNT)
def global_count(ctx):
    for amount in COUNT_AMOUNTS:
        run = runs.prune_run(ctx, amount)
        zeros = [int((w == 0).sum()) for w in run.seen.used]
        got, want, exact = sum(zeros), round(amount * TOTAL), amount * TOTAL
        if got == want:
            continue
        text = (f"prune_global(model, {amount}) on {TOTAL} Linear/Conv2d weights (layers of {LAYER_SIZES}): {got} "
                f"became zero, expected round({amount} * {TOTAL}) = {want}")
        biases = [b for b in runs.lost(run, True) if b[1]]
        others = [o for o in runs.lost(run, False) if o[1]]
        if biases:
            fail(f"{text}; {sum(b[1] for b in biases)} biases became zero too and took part of the count; "
                 + consequence(T_BIASES))
        if others:
            fail(f"{text}; {listed(o[0] for o in others)} lost values too; " + consequence(T_ONLY))
        whole = findings.kept_whole(run, want)
        if whole:
            phrase, pruned_kind, size = whole
            counted = (f", and {got} = round({amount} * {size}) counts the {pruned_kind} weights alone"
                       if pruned_kind and got == round(amount * size) else "")
            fail(f"{text}: {phrase}{counted}; rank the weights of every nn.Linear and nn.Conv2d together")
        if zeros == [round(amount * n) for n in LAYER_SIZES]:
            fail(f"{text}: that is round({amount} * n) in each layer on its own ({zeros}); " + consequence(T_RANKING))
        if got == math.floor(exact):
            fail(f"{text}: {exact:.6g} was truncated (int() or floor); round it")
        if got == math.floor(exact + 0.5):
            fail(f"{text}: {exact:.6g} was rounded half up; Python's round(), which torch uses, sends a half to the "
                 "even neighbour")
        for extra, what in ((38, "the 38 biases"), (29, "the 29 BatchNorm/LayerNorm weights"),
                            (58, "the 58 BatchNorm/LayerNorm weights and biases"), (96, "every other parameter")):
            if got == round(amount * (TOTAL + extra)):
                fail(f"{text}: {got} = round({amount} * {TOTAL + extra}): you counted {what} in the total")
        fail(text)


@CHECKS.add("global-ranking", T_RANKING)
def global_ranking(ctx):
    for amount in (AMOUNT, FIRST):
        run = runs.prune_run(ctx, amount)
        originals = [run.originals[f"{n}.weight"] for n in run.names]
        mine = nets.zeros_of(run.seen.used)
        k = int(mine.sum())
        want = nets.smallest(originals, k)
        if torch.equal(mine, want):
            continue
        flat = torch.cat([w.abs().flatten() for w in originals])
        owner = torch.cat([torch.full((w.numel(),), i) for i, w in enumerate(originals)])
        text = (f"prune_global(model, {amount}): you zeroed {k} weights, but not the {k} smallest |w| of the whole "
                f"model: sparsity per layer {run.names} is {pcts(nets.sparsity(run.seen.used))}, one global ranking "
                f"gives {pcts(nets.share(nets.split(want, originals)))}")
        if k:
            top = int(torch.where(mine, flat, -torch.inf).argmax())
            low = int(torch.where(mine, torch.inf, flat).argmin())
            text += (f"; you zeroed |w| = {flat[top].item():.3g} in {run.names[int(owner[top])]} while |w| = "
                     f"{flat[low].item():.3g} in {run.names[int(owner[low])]} survived")
        by_value = torch.zeros_like(mine)
        by_value[torch.topk(torch.cat([w.flatten() for w in originals]), k, largest=False).indices] = True
        if torch.equal(mine, by_value):
            fail(f"{text}: you ranked by signed value, which prunes the most negative weights; rank by |w|")
        if [int(z.sum()) for z in nets.split(mine, originals)] == [round(amount * w.numel()) for w in originals]:
            fail(f"{text}: each layer lost its own {amount:.0%} (a threshold per layer); rank all layers' weights "
                 "together under one threshold, as torch.nn.utils.prune.global_unstructured does")
        whole = findings.kept_whole(run, k)
        if whole:
            fail(f"{text}: {whole[0]}; rank the weights of every nn.Linear and nn.Conv2d together")
        fail(f"{text}; rank all layers' weights together by |w| under one threshold")
    pruned(ctx, "global")


@CHECKS.add("biases-kept", T_BIASES)
def biases_kept(ctx):
    run = runs.prune_run(ctx, AMOUNT, small_others=True)
    hit = runs.lost(run, True)
    if hit:
        fail(f"prune_global(model, {AMOUNT}) with every bias about 1e-3, below every weight: {sum(b[1] for b in hit)} "
             f"of {sum(b[2] for b in hit)} values of {listed(b[0] for b in hit)} became zero; prune the weights only "
             "(never pass (module, 'bias') to the ranking): a bias is one number per output unit, costs nothing to "
             "keep, and zeroing it shifts every output of that unit")
    for case, _, _, bias_before, bias_after in runs.channel_runs(ctx):
        if not torch.equal(bias_before, bias_after):
            gone = int(((bias_after == 0) & (bias_before != 0)).sum())
            fail(f"prune_channels({case.label}): the bias changed ({gone} of its {bias_before.numel()} values became "
                 "zero); prune the rows of the weight only, as ln_structured(module, 'weight', ...) does")
    pruned(ctx, "global", "channels")


@CHECKS.add("linear-and-conv-only", T_ONLY)
def linear_and_conv_only(ctx):
    hit = runs.lost(runs.prune_run(ctx, AMOUNT, small_others=True), False)
    if hit:
        fail(f"prune_global(model, {AMOUNT}) with the BatchNorm/LayerNorm parameters about 1e-3: "
             f"{listed(f'{k} ({g} of {n} values zeroed)' if g else f'{k} (changed)' for k, g, n in hit)}; prune only "
             "the weights of nn.Linear and nn.Conv2d (test the module with isinstance, not the parameter's name): a "
             "norm layer's weight is one scale per channel, and zeroing it silences the channel")
    pruned(ctx, "global")


@CHECKS.add("returns-sparsity", "Returns every Linear/Conv2d layer's sparsity, by its name in named_modules()")
def returns_sparsity(ctx):
    cases = [(f"prune_global(model, {a})", runs.prune_run(ctx, a)) for a in (AMOUNT, 0.0)]
    cases.append((f"the second call of {runs.SECOND_TEXT}", runs.second_run(ctx)))
    for label, run in cases:
        got, names = run.returned, run.names
        if not isinstance(got, dict):
            fail(f"{label} returned {type(got).__name__}, expected a dict: layer name -> sparsity")
        if sorted(map(str, got)) != sorted(names):
            why = ("; use the module's name from model.named_modules(), not the parameter's"
                   if any(str(k).endswith((".weight", ".weight_orig")) for k in got) else "")
            fail(f"{label} returned the keys {listed(sorted(map(str, got)), 6)}, expected the names of the Linear and "
                 f"Conv2d layers in model.named_modules(): {names}{why}")
        for name, used in zip(names, run.seen.used):
            value, want = got[name], nets.sparsity([used])[0]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                fail(f"{label}: the value for {name!r} is a {type(value).__name__}; return a Python float (.item())")
            if not is_close(value, want, SPARSITY_TOL):
                note = ("; that is the fraction kept, not the fraction zero" if is_close(1 - value, want, SPARSITY_TOL)
                        else "; a fraction, not a percentage" if is_close(value, 100 * want, Tol(atol=1e-4)) else "")
                fail(f"{label}: for {name} you returned {value:.6g}, but {int((used == 0).sum())} of its "
                     f"{used.numel()} weights are zero: sparsity {want:.6g}{note}")


@CHECKS.add("stays-zero-new-optimizer", T_NEW)
def stays_zero_new(ctx):
    run = runs.train_run(ctx, "AdamW", "new")
    originals = [m.weight.detach() for _, m in nets.layers(nets.build(nets.Net, "cpu"))]
    ranked = nets.split(nets.smallest(originals, round(AMOUNT * TOTAL)), originals)
    ctx.data["curves"] = {
        "title": "Sparsity per layer (" + ", ".join(f"{i} {n}" for i, n in enumerate(run.names, 1)) + ")",
        "x": "layer",
        "series": {"one global ranking": nets.share(ranked),
                   "yours after pruning": nets.sparsity(run.seen[0].used),
                   f"yours after {runs.STEPS} AdamW steps": nets.sparsity(run.seen[-1].used)},
    }
    fail_on_regrowth(ctx, "new", "global")
    pruned(ctx, "global")


def fail_on_regrowth(ctx, when, kind, cause=None):
    """Fail with the first optimizer whose run regrew pruned weights, and say what the other one did."""
    found = [(o, runs.train_run(ctx, o, when, kind)) for o in runs.OPTIMIZERS]
    found = [(o, run) for o, run in found if runs.regrowth(run)]
    if found:
        with cause_if(cause is not None, cause or ""):
            fail(regrowth_message(found, when, kind))


@CHECKS.add("stays-zero-optimizer-state", "They stay 0 with an optimizer made before the pruning, its momentum / "
            "Adam moments included")
def stays_zero_state(ctx):
    new_regrows = any(runs.regrowth(runs.train_run(ctx, o, "new")) for o in runs.OPTIMIZERS)
    fail_on_regrowth(ctx, "state", "global", consequence(T_NEW) if new_regrows else None)
    pruned(ctx, "global")


@CHECKS.add("survivors-train", "The surviving weights train as torch.nn.utils.prune's do, with an optimizer made "
            "before the pruning too")
def survivors_train(ctx):
    trained = [(when, o, runs.train_run(ctx, o, when)) for when in ("state", "new") for o in runs.OPTIMIZERS]
    for when, opt_name, run in trained:
        alive = [u != 0 for u in run.seen[0].used]
        for i in range(1, findings.survivor_steps(run)):
            for name, keep, mine, truth, mine0, truth0 in zip(run.names, alive, run.seen[i].used, run.truth[i].used,
                                                              run.seen[0].used, run.truth[0].used):
                problem = mismatch(mine[keep], truth[keep], TOL, what="surviving weights",
                                   against="torch.nn.utils.prune's")
                if not problem:
                    continue
                where = (f"prune_global(model, {AMOUNT}), then {nets.OPT_TEXT[opt_name]} made {runs.WHEN[when]}: "
                         f"{steps_text(i)}")
                if torch.equal(mine[keep], mine0[keep]):
                    fail(f"{where}, the surviving weights of {name} have not moved at all, while the same mask "
                         f"trained with torch.nn.utils.prune moves them by up to "
                         f"{(truth[keep] - truth0[keep]).abs().max().item():.3g}: the optimizer holds the weight "
                         "Parameter from before the pruning and your layer no longer uses it; keep that Parameter "
                         "object (torch moves it to weight_orig) rather than registering a new one")
                fail_on_frozen_negatives(trained)
                # Biases or norm parameters pruned with the weights stay frozen (at 0) in your model;
                # the twin trains those it finds unchanged (a norm's bias starts at 0), so the
                # surviving weights drift apart.
                upstream = runs.prune_run(ctx, AMOUNT, small_others=True)
                cause = T_BIASES if runs.lost(upstream, True) else T_ONLY if runs.lost(upstream, False) else None
                with cause_if(cause is not None, consequence(cause or "")):
                    fail(f"{where}, the surviving weights of {name} should equal those of the same mask trained "
                         f"with torch.nn.utils.prune: {problem}")
    pruned(ctx, "global")


def fail_on_frozen_negatives(trained) -> None:
    found = findings.frozen_negatives(trained)
    if found:
        when, opt_name, i, n, n_negative, largest = found
        fail(f"prune_global(model, {AMOUNT}), then {nets.OPT_TEXT[opt_name]} made {runs.WHEN[when]}: "
             f"{steps_text(i)}, {n} surviving weights, all negative, kept their values ({n} of the {n_negative} "
             "negative survivors; the positive ones moved), while the same mask trained with torch.nn.utils.prune "
             f"moves them by up to {largest:.3g}: their gradient was zeroed. A mask built from w < eps without abs "
             "freezes every negative weight; freeze by the pruning mask (or |w| < eps)")


@CHECKS.add("second-call-among-survivors", "A second prune_global zeroes round(amount * alive) more, chosen among "
            "the surviving weights")
def second_call(ctx):
    run = runs.second_run(ctx)
    dead = nets.zeros_of(run.before.used)
    alive = int((~dead).sum())
    k = round(SECOND * alive)
    want = findings.among_alive(run.before.used, dead, SECOND)
    mine = nets.zeros_of(run.seen.used)
    if torch.equal(mine, want):
        without_forward(ctx, run.before.used, want)
        return
    n_dead, n_mine = int(dead.sum()), int(mine.sum())
    text = (f"{runs.SECOND_TEXT}: {n_dead} of {TOTAL} weights were zero before the second call, so it should zero "
            f"round({SECOND} * {alive}) = {k} more of the {alive} alive, {n_dead + k} in all "
            f"({(n_dead + k) / TOTAL:.0%}); you have {n_mine}")
    revived = int((dead & ~mine).sum())
    if revived:
        text += f"; {revived} weights that were zero before the call are not after it: keep the first call's mask"
    elif n_mine == round(SECOND * TOTAL):
        text += (f": round({SECOND} * {TOTAL}), the whole model ranked from scratch, where the {n_dead} zeros are the "
                 "smallest and fill most of the count; rank only the weights still alive")
    elif n_mine - n_dead == round(SECOND * TOTAL):
        text += (f": you zeroed round({SECOND} * {TOTAL}) = {n_mine - n_dead} more, a fraction of the whole model; "
                 f"amount is a fraction of the {alive} weights still alive")
    elif n_mine == n_dead + k:
        text += ("; the count is right but not the weights: rank the surviving weights of all layers together by "
                 "their current |w| (after training: what the forward uses)")
    originals = [run.originals[f"{n}.weight"] for n in run.names]
    first = nets.zeros_of(run.first.used)
    # The first cause that holds, upstream first: a wrong first call, then weights that grew back.
    causes = [(not torch.equal(first, nets.smallest(originals, int(first.sum()))), T_RANKING),
              (int(first.sum()) != round(FIRST * TOTAL), T_COUNT), (bool((first & ~dead).any()), T_NEW)]
    cause = next((title for holds, title in causes if holds), None)
    with cause_if(cause is not None, consequence(cause or "")):
        fail(text)


def without_forward(ctx, current, want) -> None:
    """The second call again with no forward pass after the last optimizer step: it must choose what it
    chose with one (`want`), ranking the values that forward used (`current`: weight_orig * mask)."""
    run = runs.stale_run(ctx)
    mine = nets.zeros_of(run.seen.used)
    if torch.equal(mine, want):
        return
    dead = nets.zeros_of(current)
    alive, k = int((~dead).sum()), int((want & ~dead).sum())
    values = torch.cat([w.abs().flatten() for w in current])
    new, revived = mine & ~dead, int((dead & ~mine).sum())
    n_new = int(new.sum())
    if n_new == k and not revived and k < alive:
        # The two runs repeat the same steps; on an accelerator they may round differently, so a choice
        # that differs only among values equal within RTOL still ranks the current values.
        if values[new].max().item() <= values[~mine].min().item() * (1 + RTOL):
            return
        wrong = int((new & ~want).sum())
        text = (f"{runs.STALE_TEXT}: it zeroed {wrong} weights that are not among the {k} of smallest current |w| "
                f"of the {alive} alive, and spared {wrong} that are (with a forward pass before the call, it chose "
                "right)")
    else:
        text = (f"{runs.STALE_TEXT}: it zeroed {n_new} more of the {alive} alive, expected round({SECOND} * {alive}) "
                f"= {k} as with a forward pass before the call"
                + (f", and {revived} weights that were zero are not after it" if revived else ""))
    if torch.equal(mine, findings.among_alive(run.last_forward.used, dead, SECOND)):
        fail(f"{text}; you ranked the weights of the last forward pass, from before the last optimizer step: "
             "module.weight is recomputed only by a forward pass, and torch.nn.utils.prune.global_unstructured "
             "ranks it; rank weight_orig * mask as it is at the call (with torch's pruning, pass those as "
             "importance_scores)")
    fail(f"{text}; rank the weights still alive by weight_orig * mask as it is at the call, the values the next "
         "forward pass will use, whether or not a forward pass ran since the last optimizer step")


# -- prune_channels --------------------------------------------------------------------------

@CHECKS.add("channels-l2", "prune_channels zeroes the output channels of smallest L2 norm, as "
            "ln_structured(n=2, dim=0)")
def channels_l2(ctx):
    for case, before, used, _, _ in runs.channel_runs(ctx):
        out = before.shape[0]
        k = round(case.amount * out)
        want = nets.smallest_norm_rows(before, k, 2)
        flat = used.flatten(1)
        rows = [r for r in range(out) if not bool(flat[r].any())]
        partial = int((flat == 0).sum()) - len(rows) * flat.shape[1]
        if rows == want and partial == 0:
            continue
        l2 = before.flatten(1).norm(dim=1)
        text = (f"prune_channels({case.label}): expected the {k} output channels (rows) of smallest L2 norm, {want} "
                f"(norms {[round(v, 3) for v in l2[want].tolist()]}), to be zero; yours: {rows or 'none'}")
        cols = used.transpose(0, 1).flatten(1)
        if partial and not rows and any(not bool(c.any()) for c in cols):
            fail(f"{text}: you zeroed input channels (dim=1); prune output channels, whole rows of the weight (dim=0)")
        if partial:
            fail(f"{text}, and {partial} other weights are zero: prune whole rows, all of a channel's weights at once")
        if len(rows) != k:
            fail(f"{text}: {len(rows)} channels, expected round({case.amount} * {out}) = {k}")
        if rows == nets.smallest_norm_rows(before, k, 1):
            l1 = [round(v, 3) for v in before.flatten(1).abs().sum(1)[rows].tolist()]
            fail(f"{text}: those have the smallest L1 norm (sum of |w|: {l1}, L2 "
                 f"{[round(v, 3) for v in l2[rows].tolist()]}); "
                 "rank by the L2 norm, the root of the sum of squares, as ln_structured(n=2) does")
        fail(f"{text}; rank rows by their L2 norm, the smallest first")


@CHECKS.add("channels-stay-zero", "Pruned channels stay zero through training (new and older optimizers)")
def channels_stay_zero(ctx):
    for when in ("new", "state"):
        fail_on_regrowth(ctx, when, "channels")
    pruned(ctx, "channels")


# -- make_permanent --------------------------------------------------------------------------

@CHECKS.add("permanent-plain-parameter", T_PLAIN)
def permanent_plain(ctx):
    for kind, net in (("global", nets.Net), ("channels", nets.ChannelNet)):
        run, where = runs.permanent_run(ctx, kind, True), runs.PERMANENT[kind]
        if run.error:
            fail(f"{where}: make_permanent raised {run.error}" + (
                "; a module that was never pruned has no mask to remove: skip it" if kind == "channels" else ""))
        if run.problems:
            fail(f"{where}: afterwards {listed(run.problems, 3)}; make the weight a plain nn.Parameter holding "
                 "weight_orig * mask and remove the mask, the original and the hook (prune.remove does)")
        want = sorted(nets.build(net, "cpu").state_dict())
        if run.keys != want:
            fail(f"{where}: the state_dict has the keys {listed(sorted(set(run.keys) - set(want)))} instead of "
                 f"{listed(sorted(set(want) - set(run.keys)))}; it must load into an unpruned model")
        twin = runs.permanent_run(ctx, kind, False)
        changed = [k for k, v in twin.others.items() if k not in run.others or not torch.equal(v, run.others[k])]
        if changed:
            fail(f"{where}: make_permanent changed {listed(changed)}; it only turns masks into plain weights")
        if run.train_error:
            fail(f"{where}: one SGD step on the model afterwards raised {run.train_error}")
        if run.moved < run.movable:
            fail(f"{where}: one SGD step afterwards moved {run.moved} of the {run.movable} zero weights whose gradient "
                 "is not zero: a mask is still applied somewhere; leave nothing that keeps them at zero")
    pruned(ctx, "global", "channels")


@CHECKS.add("permanent-same-outputs", "make_permanent keeps the zeros and changes no output of the model")
def permanent_same(ctx):
    for kind in ("global", "channels"):
        run, twin = runs.permanent_run(ctx, kind, True), runs.permanent_run(ctx, kind, False)
        where = runs.PERMANENT[kind]
        with cause_if(run.error is not None, consequence(T_PLAIN)):
            for name, mine, want in zip(run.names, run.final.used, twin.final.used):
                back = (want == 0) & (mine != 0)
                if bool(back.any()):
                    fail(f"{where}: {int(back.sum())} of the {int((want == 0).sum())} pruned weights of {name} are "
                         f"non-zero afterwards (largest |w| {mine[back].abs().max().item():.3g}): bake "
                         "weight_orig * mask into the Parameter, not weight_orig alone")
            problem = mismatch(run.final.output, twin.final.output, TOL, what="outputs",
                               against="the pruned model's")
            if problem:
                stale = all(torch.equal(m, t) for m, t in zip(run.final.used, twin.trained[-1].used))
                fail(f"{where}: the model's outputs should stay the pruned model's: {problem}"
                     + ("; its weights are those of the last forward pass, before the last optimizer step: "
                        "module.weight was computed by that forward and is stale, so compute weight_orig * mask "
                        "afresh" if stale else ""))
    pruned(ctx, "global", "channels")
