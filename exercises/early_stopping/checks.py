"""Behavioural checks for early_stopping. The grader plays the training loop (play.py): before each
call it sets the model to that call's weights and BatchNorm statistics, hands step() a scripted
metric (plateaus, ties at min_delta, NaN, mode max), and reads what the stopper did; rule.py says
what the contract expects and which usual mistake a wrong answer matches."""

from __future__ import annotations

import math
import struct

from quizapp.checking.harness import Checks, Required, consequence, fail, fmt, listed, nothing_to_check, sibling_module

rule = sibling_module(__file__, "rule")
play = sibling_module(__file__, "play")
scn = sibling_module(__file__, "scenarios")
Scenario, num, shown = play.Scenario, play.num, play.shown

CHECKS = Checks(Required(
    "EarlyStopping", '(patience=5, min_delta=0.0, mode="min", restore_best=True)',
    sample_kwargs={"patience": 5, "min_delta": 0.0, "mode": "min", "restore_best": True}, is_class=True,
))

TITLES = {
    "non-finite": "A NaN or infinite metric stops at once and never becomes best",
    "restore": "When step returns True, the model holds the best call's weights again",
}


def expected(sc: Scenario, r=rule.CONTRACT):
    return rule.run(sc.metrics, sc.patience, sc.min_delta, sc.mode, r)


def as_float32(x: float) -> float | None:
    """x rounded to float32 and back, what a float32 tensor's .item() gives; None beyond float32's range."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return None


def nth(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def returned_true(stop, n) -> str:
    """Where a run first returned True, or that none of its n calls did."""
    return f"never returned True within the {n} calls" if stop is None else f"returned True at call {stop}"


def never_or_at(stop, n) -> str:
    return f"yours {returned_true(stop, n)}"


def need(sc: Scenario, calls, i: int) -> str:
    """What call i needed in order to improve, in numbers."""
    if i == 0:
        return "the first call always improves: its metric becomes best, whatever it is"
    prev = calls[i - 1]
    if prev.best is None:
        return "nothing has improved yet, so it improves"
    lower = sc.mode == "min"
    threshold = prev.best - sc.min_delta if lower else prev.best + sc.min_delta
    return (f"best was {num(prev.best)} (call {prev.best_epoch}), so an improvement needs a metric "
            f"{'below' if lower else 'above'} best {'-' if lower else '+'} min_delta = {fmt(threshold)}")


def seen(sc: Scenario, trace, *, moves=True, stop=True):
    return rule.Seen(sc.metrics, sc.patience, sc.min_delta, sc.mode, tuple(trace.moved()) if moves else None,
                     trace.stop if stop else rule.ANY)


def observe(ctx, scenarios) -> list:
    return [seen(sc, play.play(ctx, ctx.solution, sc), stop=False) for sc in scenarios]


def min_delta_cause(ctx, also=()) -> str:
    """The min_delta mistake that does what the solution did in mode='min' (and in `also`), where it
    stopped on the creeping metric included (its own patience count allowed for); else ''."""
    try:
        count = own_count(ctx)
        runs = [*observe(ctx, [*scn.MIN_DELTA, scn.MIN_DELTA_TIMING]),
                seen(scn.CREEP, play.play(ctx, ctx.solution, scn.CREEP))]
    except Exception:  # noqa: BLE001 - only a diagnosis: a run that raised names no mistake
        return ""
    late = 0 if count is None else count - scn.CONTROL.patience
    return rule.explain(rule.MIN_DELTA_MISTAKES, [*also, *runs], late=late)


def expect_moves(ctx, scenarios, explain) -> None:
    """Each call moves best/best_epoch exactly when the contract says it improves; `explain(observed)`
    says which mistake the solution's moves match."""
    traces = [play.play(ctx, ctx.solution, sc) for sc in scenarios]
    observed = [seen(sc, trace, stop=False) for sc, trace in zip(scenarios, traces)]
    for sc, trace, obs in zip(scenarios, traces, observed):
        calls = expected(sc)
        for i, (moved, call) in enumerate(zip(obs.moved, calls)):
            if any(moved) == call.improved:
                continue
            verdict = "an improvement" if call.improved else "no improvement"
            after = f"best {shown(trace.best[i])}, best_epoch {shown(trace.best_epoch[i])} after the call"
            did = f"took it as the new best ({after})" if any(moved) else f"did not ({after})"
            fail(f"{sc.text()}: call {i} has metric {num(sc.metrics[i])}; {need(sc, calls, i)}: {verdict}. "
                 f"Yours {did}.{explain(observed)}")


def own_count(ctx) -> int | None:
    """How many calls without improvement the solution waits on a plain curve before True."""
    trace = play.play(ctx, ctx.solution, scn.CONTROL)
    if trace.stop is None:
        return None
    return trace.stop - expected(scn.CONTROL)[trace.stop].best_epoch


def plot(ctx) -> None:
    # Trained in place, as an optimizer does: "holding" then shows a restore from a state that
    # was never copied, too.
    yours, ref = (play.play(ctx, impl, scn.PLOT, training="inplace") for impl in (ctx.solution, ctx.reference))

    def bests(trace):
        return [b if play.number(b) else None for b in trace.best]

    def ending(trace):
        if trace.stop is None:
            return "never stops"
        held = play.common_call(trace.held[trace.stop], play.PARAMS)
        return f"at {trace.stop} holding {'?' if held is None else held}"

    # Short: the plot is 70 to 80 columns wide, and a longer title is dropped.
    ctx.data["curves"] = {"title": f"val loss, best: ref stops {ending(ref)}; yours {ending(yours)}",
                          "x": "step", "series": {"val loss": list(scn.PLOT.metrics), "reference": bests(ref),
                                                  "yours": bests(yours)}}


# -- when to stop ---------------------------------------------------------------------------------

@CHECKS.add("patience", "step returns True on the patience-th call in a row without an improvement")
def patience(ctx):
    plot(ctx)
    traces = [play.play(ctx, ctx.solution, sc) for sc in scn.PATIENCE]
    for sc, trace in zip(scn.PATIENCE, traces):
        for i, r in enumerate(trace.returns):
            if type(r) is not bool:
                fail(f"{sc.text()}: step returned {shown(r)} at call {i}; return a bool: True to "
                     "stop now, False to go on")
    for sc, trace in zip(scn.PATIENCE, traces):
        calls = expected(sc)
        want = rule.first_stop(calls)
        if trace.stop == want:
            continue
        last = calls[want].best_epoch
        why = rule.explain(rule.PATIENCE_MISTAKES, [seen(s, t, moves=False) for s, t in zip(scn.PATIENCE, traces)])
        fail(f"{sc.text()}: the last improvement before call {want} is call {last} ({num(sc.metrics[last])}), so "
             f"call {want} is the {nth(sc.patience)} in a row without one and step should return True there; "
             f"{never_or_at(trace.stop, len(sc.metrics))}.{why}")


@CHECKS.add("min-delta", "An improvement must beat best by more than min_delta; a smaller gain changes nothing")
def min_delta(ctx):
    expect_moves(ctx, [*scn.MIN_DELTA, scn.MIN_DELTA_TIMING], lambda _observed: min_delta_cause(ctx))
    count = own_count(ctx)
    if count is None:
        return  # a solution that never stops: the patience check says so
    sc = scn.MIN_DELTA_TIMING
    late = count - sc.patience  # the solution's own patience count, right or not, is judged elsewhere
    calls = expected(sc, rule.Rule(late=late))
    want, trace = rule.first_stop(calls), play.play(ctx, ctx.solution, sc)
    if trace.stop == want:
        return
    last = calls[want].best_epoch
    smaller = [i for i in range(last + 1, want + 1) if sc.metrics[i] < sc.metrics[last]]
    own = (f" (on a plain curve yours returns True {count} calls after the last improvement, so that is the "
           f"call here)" if late else "")
    why = rule.explain(rule.MIN_DELTA_MISTAKES, [seen(sc, trace)], late=late)
    fail(f"{sc.text()}: the last improvement is call {last} ({num(sc.metrics[last])}); calls "
         f"{listed(smaller)} are lower, but by less than min_delta, so they are calls without improvement and "
         f"step should return True at call {want}{own}; {never_or_at(trace.stop, len(sc.metrics))}.{why}")


@CHECKS.add("mode-max", "mode='max': higher is better, and min_delta counts upwards")
def mode_max(ctx):
    def explain(observed):
        # A min_delta mistake made in both modes is one cause: named as the min-delta check names it.
        shared = min_delta_cause(ctx, observed)
        if shared:
            return f"{shared} The min-delta check fails for the same reason in mode='min'."
        return rule.explain({**rule.MODE_MISTAKES, **rule.MIN_DELTA_MISTAKES}, observed)

    expect_moves(ctx, scn.MODE_MAX, explain)


@CHECKS.add("best-and-epoch", "best and best_epoch are the metric and the 0-based call of the last improvement")
def best_and_epoch(ctx):
    for sc in scn.BEST:
        trace = play.play(ctx, ctx.solution, sc)
        calls, last = expected(sc), None
        for i, moved in enumerate(trace.moved()):
            last = i if any(moved) else last
            if last is None:
                continue  # nothing improved yet in the solution's eyes: the other checks say why
            best, epoch, metric = trace.best[i], trace.best_epoch[i], sc.metrics[last]
            numbers = play.number(best) and type(epoch) is int  # compared only then: no learner's __eq__ runs
            if numbers and best == metric and epoch == last:
                continue
            where = f"{sc.text()}: after call {i}"
            if numbers and epoch == last + 1 and best == metric:
                fail(f"{where} best_epoch is {epoch}, but best {shown(best)} was set by call {last}: best_epoch is "
                     "the 0-based index of the step() call that set best (the first call is 0)")
            if play.number(best) and best == -metric:
                fail(f"{where} best is {shown(best)}, but the metric that set it (call {last}) was {num(metric)}: keep "
                     f"best as the metric itself, also in mode='{sc.mode}' (negate only inside the comparison)")
            if numbers and 0 <= epoch <= i and epoch != last and best == metric:
                small = "" if calls[last].improved else (
                    f" Call {last}'s {num(metric)} is no improvement: it beat best by less than min_delta="
                    f"{fmt(sc.min_delta)}, and such a metric leaves best alone")
                fail(f"{where} best is {shown(best)} (call {last}'s metric) but best_epoch is {epoch} (metric "
                     f"{num(sc.metrics[epoch])}): both must be those of the last improvement.{small}")
            if numbers and epoch == last and best == as_float32(metric):
                fail(f"{where} best is {shown(best)}, call {last}'s metric {num(metric)} rounded to float32: best is "
                     "the metric exactly as it was passed to step, the same Python float. A float32 copy (a tensor "
                     "made by torch.tensor(metric), as Lightning keeps best_score) rounds it: keep the float itself")
            fail(f"{where} best is {shown(best)} and best_epoch {shown(epoch)}; your stopper last took a new best at call "
                 f"{last} (metric {num(metric)}), so best should be {num(metric)} and best_epoch {last}")


@CHECKS.add("non-finite", TITLES["non-finite"])
def non_finite(ctx):
    for sc, k in scn.NON_FINITE:
        trace = play.play(ctx, ctx.solution, sc)
        bad = sc.metrics[k]
        if trace.stop is not None and trace.stop < k:
            continue  # stopped before the bad metric: the patience check's business
        if trace.stop == k:
            if k and (play.differs(trace.best[k], trace.best[k - 1]) or
                      play.differs(trace.best_epoch[k], trace.best_epoch[k - 1])):
                fail(f"{sc.text()}: step returned True at call {k} (metric {num(bad)}), but best and best_epoch "
                     f"changed from {shown(trace.best[k - 1])}, {shown(trace.best_epoch[k - 1])} to {shown(trace.best[k])}, "
                     f"{shown(trace.best_epoch[k])}: a non-finite metric never becomes best")
            continue
        best, before = trace.best[k], trace.best[k - 1] if k else trace.start[0]
        head = (f"{sc.text()}: call {k}'s metric is {num(bad)}, so step should return True at once"
                + (", on the first call too" if k == 0 else "") + f"; yours returned {shown(trace.returns[k])}")
        if play.number(best) and not math.isfinite(best) and play.differs(best, before):
            if k == 0:
                why = ("the first call improves only when its metric is finite: test math.isfinite(metric) before "
                       "anything else, the first call included")
            elif math.isnan(bad):
                why = ("every comparison with NaN is False, so a test like `not metric >= best` lets it through: "
                       "test math.isfinite(metric) before comparing")
            else:
                why = (f"{num(bad)} beats any best in mode='{sc.mode}', and math.isnan({num(bad)}) is False: test "
                       "math.isfinite(metric), which is False for nan, inf and -inf, before comparing")
            fail(f"{head} and took it as best (best became {shown(best)}): {why}")
        later = ("and never returned True" if trace.stop is None else
                 f"and went on until call {trace.stop}, {trace.stop - k} call{'s' if trace.stop - k > 1 else ''} later")
        why = ("a NaN means training diverged, and waiting patience more calls changes nothing: test "
               "math.isfinite(metric) first" if math.isnan(bad) else
               f"an infinite metric means training diverged too, and math.isnan({num(bad)}) is False: test "
               "math.isfinite(metric), which is False for nan, inf and -inf")
        fail(f"{head} {later}: it counted as just another call without improvement; {why}")


# -- the best state ------------------------------------------------------------------------------

def some_stop(traces, where: str = "") -> None:
    """Skip a check of what step does when it returns True, for a stopper that never did: a model left
    alone because nothing stopped shows nothing about restoring."""
    if all(trace.stop is None for trace in traces):
        nothing_to_check(f"step never returned True{where}, so it never had a state to restore or to keep")


def restore_diagnosis(trace, sc: Scenario, best: int) -> str:
    """Why the model does not hold the best call's weights, as far as the run shows."""
    k = trace.stop
    epoch = trace.best_epoch[k]
    if type(epoch) is int and 0 <= epoch < len(sc.metrics) and not math.isfinite(sc.metrics[epoch]):
        return (f" Your stopper took call {epoch}'s {num(sc.metrics[epoch])} as best and saved its weights; "
                + consequence(TITLES["non-finite"]))
    held, calls = play.common_call(trace.held[k], play.PARAMS), expected(sc)
    before = calls[held - 1] if held and held <= k else None
    if (before and before.best is not None and not calls[held].improved and math.isfinite(sc.metrics[held])
            and rule.beats(sc.metrics[held], before.best, 0.0, sc.mode)):
        return (f" Call {held}'s {num(sc.metrics[held])} beat best {num(before.best)} (call {before.best_epoch}) by no "
                f"more than min_delta={fmt(sc.min_delta)}: that is no improvement, so it saves nothing. Save the state "
                "where best moves, on the same test, not at every better metric (as a checkpoint callback without "
                "min_delta does)")
    loaded = [play.common_call(state, play.PARAMS) for state in trace.loads[k]]
    if loaded:
        got = ", ".join("values of no call" if c is None else f"call {c}'s values" for c in loaded)
        return (f" step did call load_state_dict, with {got}: the state it saved is not call {best}'s (save it "
                "on an improvement only, and as a copy)")
    if not math.isfinite(sc.metrics[k]):
        return (f" This stop came from the {num(sc.metrics[k])} metric: restore there too (one helper that restores "
                "and returns True, called from both places that stop)")
    methods = [n for n in dir(type(trace.stopper)) if not n.startswith("__") and n != "step"
               and ("restore" in n.lower() or "load" in n.lower()) and callable(getattr(type(trace.stopper), n, None))]
    if methods:
        return (f" Your EarlyStopping has {listed(methods)}, which step does not call before returning True; nothing "
                "else will call it: restore inside step, before `return True`")
    try:  # does it restore on the next call? Nothing makes that call after a True
        trace.stopper.step(sc.metrics[k], trace.model)
        states = play.call_states(len(sc.metrics))
        again = play.common_call(play.held_by(trace.model.state_dict(), states), play.PARAMS)
    except Exception:  # noqa: BLE001 - only a diagnosis
        again = None
    if again == best:
        return (" It restores on the next call to step, but nothing calls step after it has returned True: "
                "restore before returning")
    return " Load the saved best state into the model (model.load_state_dict(best_state)) before `return True`"


@CHECKS.add("restore", TITLES["restore"])
def restore(ctx):
    # Changing the model on a call that returned False is wrong whether or not it ever stops: first.
    for sc in scn.RESTORE:
        trace = play.play(ctx, ctx.solution, sc)
        for i, held in enumerate(trace.held):
            wrong = [key for key in play.PARAMS if held[key] != i]
            if i != trace.stop and wrong:
                fail(f"{sc.text()}: step returned {shown(trace.returns[i])} at call {i} but changed the model: "
                     f"{listed(wrong, 3)} now hold {play.holds(held, wrong)}; step may change the model only when it "
                     "returns True (to restore the best state)")
        if trace.stop is None:
            continue  # never stopped: the patience and non-finite checks say why
        k = trace.stop
        best = expected(sc)[k].best_epoch
        wrong = [key for key in play.PARAMS if trace.held[k][key] != best]
        own = trace.best_epoch[k]
        if best is None or not wrong or (type(own) is int and 0 <= own <= k and math.isfinite(sc.metrics[own])
                                         and play.common_call(trace.held[k], play.PARAMS) == own):
            continue  # which call is best is the other checks' business: the solution's own best is fine here
        fail(f"{sc.text()}: step returned True at call {k}; the best call was {best} (metric "
             f"{num(sc.metrics[best])}), so the model should hold call {best}'s weights when step returns, but "
             f"{listed(wrong, 3)} hold {play.holds(trace.held[k], wrong)}.{restore_diagnosis(trace, sc, best)}")
    some_stop([play.play(ctx, ctx.solution, sc) for sc in scn.RESTORE])


@CHECKS.add("copy-of-state", "The saved best state is a copy that later training cannot change")
def copy_of_state(ctx):
    # Compared with the solution's own run where training assigns new tensors: whether that run
    # restores the right call is the restore check's business; here only "in place changes the answer".
    some_stop([play.play(ctx, ctx.solution, sc, training=way)
               for sc in scn.RESTORE[:2] for way in ("assign", "inplace")])
    for sc in scn.RESTORE[:2]:
        assigned = play.play(ctx, ctx.solution, sc)
        in_place = play.play(ctx, ctx.solution, sc, training="inplace")
        k = in_place.stop
        if k is None or k != assigned.stop:
            continue
        diff = [key for key in play.KEYS if assigned.held[k][key] != in_place.held[k][key]]
        if not diff:
            continue
        aliases = (f" Your EarlyStopping keeps {listed(in_place.aliases, 3)}, which share memory with the model's "
                   "live tensors." if in_place.aliases else "")
        fail(f"{sc.text()}: step returned True at call {k}. When training assigns new tensors, the model then holds "
             f"{play.holds(assigned.held[k], diff)} in {listed(diff, 3)}; when training updates them in place, as "
             f"optimizer.step() and BatchNorm do, it holds {play.holds(in_place.held[k], diff)}: the state saved at "
             f"the best call changed along with the model.{aliases} model.state_dict() returns references to the "
             "live tensors (so do .detach(), .data, dict(...) or copy.copy of it, and .cpu() of a CPU tensor): "
             "save {k: v.detach().clone() for k, v in model.state_dict().items()} or "
             "copy.deepcopy(model.state_dict())")


@CHECKS.add("buffers", "Restoring brings back BatchNorm's running statistics with the weights")
def buffers(ctx):
    # Judged against the parameters the solution restored: whether those are right is the
    # restore check's business; here only "the buffers come back with them".
    some_stop([play.play(ctx, ctx.solution, sc) for sc in scn.RESTORE[:2]])
    for sc in scn.RESTORE[:2]:
        trace = play.play(ctx, ctx.solution, sc)
        k = trace.stop
        if k is None:
            continue
        held, best = trace.held[k], expected(sc)[k].best_epoch
        params = play.common_call(held, play.PARAMS)
        target = best if params is None else params
        wrong = [key for key in play.BUFFERS if held[key] != target]
        if not wrong:
            continue
        what = ("the best call's" if target == best else
                f"what the parameters hold after your restore (the best is call {best}'s)")
        fail(f"{sc.text()}: step returned True at call {k} and the parameters hold call {target}'s values, "
             f"{what}, but the buffers {listed(wrong)} hold {play.holds(held, wrong)}. BatchNorm's running_mean and "
             "running_var normalise every input in eval mode: the best weights with the last statistics are "
             "neither model. Save and load model.state_dict(), which has the buffers (named_parameters() does not)")


@CHECKS.add("restore-best-false", "restore_best=False leaves the last weights in the model")
def restore_best_false(ctx):
    sc = scn.RESTORE[0]
    trace = play.play(ctx, ctx.solution, sc, restore_best=False)
    for i, held in enumerate(trace.held):
        wrong = [key for key in play.KEYS if held[key] != i]
        if wrong:
            fail(f"{sc.text(restore_best=False)}: after call {i} (step returned {shown(trace.returns[i])}) "
                 f"{listed(wrong, 3)} hold {play.holds(held, wrong)}, not call {i}'s: with restore_best=False step "
                 "never changes the model (the caller asked to keep the last weights)")
    some_stop([trace], " with restore_best=False")


# -- the arguments --------------------------------------------------------------------------------

@CHECKS.add("defaults", 'EarlyStopping() means patience=5, min_delta=0.0, mode="min", restore_best=True')
def defaults(ctx):
    # Compared with the solution's own explicit run: only the defaults are judged here.
    plain_call = play.play(ctx, ctx.solution, scn.DEFAULTS, defaults=True)
    explicit = play.play(ctx, ctx.solution, scn.DEFAULTS)
    spelled = scn.DEFAULTS.text().split(", metrics")[0]
    head = f"on metrics {scn.DEFAULTS.text().split(', metrics ')[1]}, EarlyStopping()"
    moved, moved_explicit = [any(m) for m in plain_call.moved()], [any(m) for m in explicit.moved()]
    i = next((i for i, (a, b) in enumerate(zip(moved, moved_explicit)) if a != b), None)
    if i is not None:
        fail(f"{head} {'counted' if moved[i] else 'did not count'} call {i}'s {num(scn.DEFAULTS.metrics[i])} as an "
             f"improvement and {spelled} {'did' if moved_explicit[i] else 'did not'}: the default min_delta is 0.0 "
             "(any gain counts) and the default mode 'min'")
    if plain_call.stop != explicit.stop:
        n = len(scn.DEFAULTS.metrics)
        fail(f"{head} {returned_true(plain_call.stop, n)}, and {spelled} {returned_true(explicit.stop, n)}: the "
             "default patience is 5")
    k = plain_call.stop
    if k is not None and plain_call.held[k] != explicit.held[k]:
        fail(f"{head} left the model holding {play.holds(plain_call.held[k], play.KEYS)} when it stopped, and "
             f"{spelled} {play.holds(explicit.held[k], play.KEYS)}: restore_best defaults to True")


@CHECKS.add("validation", "Invalid arguments raise ValueError")
def validation(ctx):
    base = {"patience": 5, "min_delta": 0.0, "mode": "min", "restore_best": True}
    cases = [({"patience": 0}, "patience < 1"), ({"patience": -2}, "patience < 1"),
             ({"min_delta": -0.01}, "min_delta < 0"),
             ({"mode": "auto"}, "mode is neither 'min' nor 'max' (Keras guesses from the metric's name under "
                                "'auto'; here the caller says which way is better)")]
    for change, why in cases:
        args = ", ".join(f"{k}={v!r}" for k, v in change.items())
        try:
            ctx.solution.EarlyStopping(**{**base, **change})
        except ValueError:
            continue
        except Exception as exc:  # noqa: BLE001 - the wrong kind of error is the learner's to see
            fail(f"EarlyStopping({args}) raised {type(exc).__name__}({exc}); expected ValueError ({why})")
        fail(f"EarlyStopping({args}) returned without error; expected ValueError ({why})")
