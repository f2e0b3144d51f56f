"""Behavioural checks for moe_routing: call the learner's moe_forward on routers and experts built
here (scenarios.py), record every expert call with forward pre-hooks, and compare y, aux_loss and
their gradients with a dense float64 computation of the contract (truth.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

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
    mismatch,
    nothing_to_check,
    rel_diff,
    sibling_module,
)

scn = sibling_module(__file__, "scenarios")
truth_of = sibling_module(__file__, "truth")
dispatch = sibling_module(__file__, "dispatch")
causes = sibling_module(__file__, "causes")

# The contract's tolerances. y in float32 against the float64 truth, element by element: the reference
# and four other correct solutions (a loop over tokens, Mixtral's loop, a sorted dispatch, a softmax over
# the k chosen logits) were measured within 0.2 of this bound; the smallest real mistake (gates not
# renormalised) moves y by 10% and more.
Y_TOL = Tol(rtol=1e-5, atol=1e-6)
AUX_RTOL = 1e-6  # measured within 2e-7 (float32 means of 40-64 probabilities)
GRAD_TOL = Tol(rtol=1e-4, atol=1e-6)
# bfloat16: y within 2e-2 of its largest |value| (each of the expert output, the gate product and the
# sum rounds once to 8 bits: measured up to 7e-3); aux_loss, float32, within 1e-5 of the truth from the
# float32 probabilities (a bfloat16 softmax moves it by 1e-4 to 1e-2).
BF16_Y_TOL = Tol(rtol=2e-2, of_largest=True)
BF16_AUX_RTOL = 1e-5

CHECKS = Checks(Required("moe_forward", "(x, router, experts, *, k=2) -> tuple[torch.Tensor, torch.Tensor]",
                         sample_args=(None, None, None), sample_kwargs={"k": 2}))


# -- one call of moe_forward, and what it left ------------------------------------------------

@dataclass
class Run:
    case: object
    inputs: object
    truth: object
    x: torch.Tensor  # the tensor handed to moe_forward
    x_before: torch.Tensor
    calls: object
    forward_calls: list
    y: object = None
    aux: object = None
    returned: str = ""  # what is wrong with the returned value, if anything
    grads: dict = field(default_factory=dict)


def call(ctx, case, requires_grad: bool = True) -> Run:
    inputs = scn.build(case, ctx.device)
    truth = truth_of.compute(inputs, case.k)
    x = inputs.x.detach().clone().requires_grad_(requires_grad)
    before = [getattr(e, "forward_calls", 0) for e in inputs.experts]
    calls = scn.Calls(inputs.router, inputs.experts)
    try:
        with ctx.given(scn.describe(case)):
            out = ctx.solution.moe_forward(x, inputs.router, inputs.experts, k=case.k)
    finally:
        calls.stop()
    ran = [n - b for n, b in zip(calls.forward_calls(), before)]
    run = Run(case, inputs, truth, x, inputs.x.detach().clone(), calls, ran)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        run.returned = f"moe_forward returned a {type(out).__name__}; expected a tuple (y, aux_loss)"
        return run
    run.y, run.aux = out
    shape = (case.tokens, case.dim)
    if not isinstance(run.y, torch.Tensor) or tuple(run.y.shape) != shape:
        got = f"shape {tuple(run.y.shape)}" if isinstance(run.y, torch.Tensor) else f"a {type(run.y).__name__}"
        run.returned = f"y is {got}; expected a tensor of shape {shape}, like x"
    elif not isinstance(run.aux, torch.Tensor) or run.aux.dim() != 0:
        got = f"shape {tuple(run.aux.shape)}" if isinstance(run.aux, torch.Tensor) else f"a {type(run.aux).__name__}"
        run.returned = (f"aux_loss is {got}; expected a 0-dim tensor (no .item(): the router learns from its "
                        "gradient)")
    return run


def where(run) -> str:
    return scn.describe(run.case)


def returned(run) -> None:
    if run.returned:
        fail(f"{where(run)}: {run.returned}")


def runs(ctx, cases, key: str, requires_grad: bool = True) -> list:
    return [ctx.cached((key, i), lambda c=case: call(ctx, c, requires_grad)) for i, case in enumerate(cases)]


def main_runs(ctx):
    return runs(ctx, scn.MAIN, "main")


def fails(ctx, check) -> bool:
    """Whether an earlier check fails (or stops on an error): a later failure may follow from it."""

    def go():
        try:
            check(ctx)
        except CheckSkipped:
            return False
        except Exception:  # noqa: BLE001 - a failure or an error: either way the cause may lie there
            return True
        return False

    return ctx.cached(("fails", check.__name__), go)


def follows(ctx, check):
    title = next(c.title for c in CHECKS.checks if c.run is check)
    return cause_if(fails(ctx, check), consequence(title))


# -- routing and output ------------------------------------------------------------------------

@CHECKS.add("gates", "Each token's gates are its k largest float32 router probabilities (torch.topk), renormalised "
            "to sum to 1 (1 exactly when k = 1)")
def gates(ctx):
    for run in runs(ctx, scn.GATES, "gates"):
        returned(run)
        num_experts = run.case.experts
        seen = run.y.detach().cpu().double()
        problem = mismatch(seen[:, :num_experts], run.truth.gates, Y_TOL, what="gates", against="the expected")
        if problem:
            fail(f"{causes.gates(where(run), run, seen[:, :num_experts], Y_TOL)} ({problem})")
        if not bool((seen[:, num_experts:] == 0).all()):
            fail(f"{where(run)}: each expert here outputs the one-hot row of its own index, so y's columns "
                 f"{num_experts} and up must be 0; yours are not: y is not the gate-weighted sum of the experts' "
                 "outputs")


@CHECKS.add("output", "y equals the sum over each token's k experts of gate x expert(x[t]) (float32, 5 shapes, "
            "near-uniform to peaked routers, idle experts)")
def output(ctx):
    with follows(ctx, gates):
        for run in main_runs(ctx):
            returned(run)
            problem = mismatch(run.y, run.truth.y, Y_TOL, what="entries of y", against="the expected")
            if problem:
                fail(f"{where(run)}: {problem}{causes.output(run)}")
            if run.y.dtype != run.x.dtype:
                fail(f"{where(run)}: y is {run.y.dtype}, x is {run.x.dtype}: expected y in x's dtype")


@CHECKS.add("expert-calls", "Each chosen expert is called once, on a 2-D batch of exactly the rows of x of the "
            "tokens that chose it; an expert no token chose is not called")
def expert_calls(ctx):
    every = main_runs(ctx)
    if not any(run.calls.expert_calls or sum(run.forward_calls) for run in every):
        nothing_to_check("no expert was called in any forward")
    for run in every:
        problem = dispatch.problem(run.calls, run.forward_calls, run.x_before, run.truth.chosen)
        if problem:
            fail(f"{where(run)}: {problem}")


# -- the balancing loss -----------------------------------------------------------------------

def aux_value(run) -> float:
    returned(run)
    if run.aux.dtype != torch.float32:
        fail(f"{where(run)}: aux_loss is {run.aux.dtype}; expected float32 (P comes from the float32 probabilities)")
    return float(run.aux.detach())


@CHECKS.add("aux-loss", "aux_loss equals HF's load_balancing_loss_func: E x sum_i f_i P_i, with f summed over the "
            "k choices (sum f_i = k)")
def aux_loss(ctx):
    for run in main_runs(ctx):
        seen, want = aux_value(run), run.truth.aux
        if not is_close(seen, want, Tol(rtol=AUX_RTOL)):
            fail(f"{where(run)}: aux_loss is {seen:.7g}, expected {want:.7g} (relative difference "
                 f"{rel_diff(seen, want):.2e}, tolerance {AUX_RTOL:.0e}; f sums to {run.case.k}, the k choices of each "
                 f"token){causes.aux(run, seen)}")


# -- gradients -------------------------------------------------------------------------------

def gradients(run, which: str) -> dict:
    """name -> the solution's gradient (None where it does not depend on it) of sum(y * w) or aux_loss."""
    if which in run.grads:
        return run.grads[which]
    returned(run)
    loss = (run.y * run.inputs.weights).sum() if which == "y" else run.aux
    named = truth_of.named_parameters(run.inputs.router, run.inputs.experts) + [("x", run.x)]
    if not loss.requires_grad:
        what = "sum(y * w)" if which == "y" else "aux_loss"
        fail(f"{where(run)}: {what} carries no gradient: it was cut off from the router, the experts and x "
             "(a .detach(), .item() or torch.no_grad() on the way)")
    got = torch.autograd.grad(loss, [t for _, t in named], retain_graph=True, allow_unused=True)
    run.grads[which] = {n: g for (n, _), g in zip(named, got)}
    return run.grads[which]


def compare_grads(run, which: str, expected: dict) -> None:
    seen = gradients(run, which)
    loss = "sum(y * w)" if which == "y" else "aux_loss"
    for name, want in expected.items():
        got = seen[name]
        if want is None:  # aux_loss does not depend on the experts
            if got is not None and mismatch(got, torch.zeros_like(got), GRAD_TOL):
                fail(f"{where(run)}: aux_loss gives {name} a gradient of up to {got.abs().max().item():.3g}; it "
                     "depends on the router's probabilities only")
            continue
        if got is None:  # not in the graph: a zero gradient, right where the expected one is zero too
            if mismatch(torch.zeros_like(want), want, GRAD_TOL):
                why = ("; the gate values are the router's one path into y (torch.topk's indices carry no gradient): "
                       "a .detach() or torch.no_grad() around the gates cuts it" if which == "y" and
                       name.startswith("router") else "")
                fail(f"{where(run)}: {name} gets no gradient from {loss}, though it should (up to "
                     f"{want.abs().max().item():.3g}): it is not in the graph of {loss}{why}")
            continue
        problem = mismatch(got, want, GRAD_TOL, what=f"entries of {name}'s gradient", against="the expected")
        if problem:
            fail(f"{where(run)}: the gradient of {loss} with respect to {name}: {problem}"
                 f"{grad_cause(run, which, name)}")


def grad_cause(run, which: str, name: str) -> str:
    if name == "x" and not torch.equal(run.x.detach().cpu(), run.x_before.cpu()):
        title = next(c.title for c in CHECKS.checks if c.run is input_unchanged)
        return (f"; x was changed in place during the call, so its gradient is that of other values, in other "
                f"places: {consequence(title)}")
    if which == "aux" and is_close(float(run.aux.detach()), run.truth.aux, Tol(rtol=AUX_RTOL)):
        return ("; aux_loss's value is right, so a term that should carry no gradient carries some: f_i counts "
                "choices and has no gradient (build it from the indices, e.g. one_hot, or detach it); only P_i, "
                "the mean probability, is differentiated")
    if which == "y" and name.startswith("router") and run.case.k == 1:
        return "; with k = 1 every gate is p / p = 1, so the router gets (up to rounding) no gradient from y"
    return ""


@CHECKS.add("output-gradients", "The gradient of sum(y * w) reaches the router's weight and bias (through the gates), "
            "every expert's parameters and x, with the expected values")
def output_gradients(ctx):
    with follows(ctx, output):
        for run in main_runs(ctx):
            compare_grads(run, "y", run.truth.y_grads)


@CHECKS.add("aux-gradients", "The gradient of aux_loss reaches the router and x through P only (f carries none), "
            "and no expert")
def aux_gradients(ctx):
    with follows(ctx, aux_loss):
        for run in main_runs(ctx):
            compare_grads(run, "aux", run.truth.aux_grads)


# -- ties and bfloat16 ---------------------------------------------------------------------------

@CHECKS.add("ties", "Exact ties (duplicated router rows, tokens whose logits are the bias alone) are broken as "
            "torch.topk breaks them")
def ties(ctx):
    with follows(ctx, output):
        for run in runs(ctx, scn.TIES, "ties"):
            returned(run)
            problem = mismatch(run.y, run.truth.y, Y_TOL, what="entries of y", against="the expected")
            if problem:
                fail(f"{where(run)}: {problem}{causes.tie(run)}")
    with follows(ctx, aux_loss):
        for run in runs(ctx, scn.TIES, "ties"):
            seen = aux_value(run)
            if not is_close(seen, run.truth.aux, Tol(rtol=AUX_RTOL)):
                why = "" if fails(ctx, aux_loss) else ": its f must count the same choice as y, torch.topk's"
                fail(f"{where(run)}: y is right, but aux_loss is {seen:.7g}, expected {run.truth.aux:.7g}{why}")


@CHECKS.add("bfloat16", "bfloat16 x and modules: y in bfloat16 within 2e-2, aux_loss in float32 from the float32 "
            "probabilities")
def bfloat16(ctx):
    with follows(ctx, output), follows(ctx, aux_loss):
        for run in runs(ctx, scn.BF16, "bf16"):
            returned(run)
            if run.y.dtype != torch.bfloat16:
                fail(f"{where(run)}: y is {run.y.dtype}; expected bfloat16, x's dtype (cast the gates to x's dtype "
                     "and add up in it)")
            if run.aux.dtype != torch.float32:
                fail(f"{where(run)}: aux_loss is {run.aux.dtype}; expected float32: P comes from the float32 "
                     "probabilities, and the loss stays float32")
            problem = mismatch(run.y, run.truth.y, BF16_Y_TOL, what="entries of y", against="the expected")
            if problem:
                fail(f"{where(run)}: {problem}{'' if fails(ctx, output) else causes.bf16_y(run)}")
            seen = float(run.aux.detach())
            if not is_close(seen, run.truth.aux, Tol(rtol=BF16_AUX_RTOL)):
                fail(f"{where(run)}: aux_loss is {seen:.7g}, expected {run.truth.aux:.7g} (relative difference "
                     f"{rel_diff(seen, run.truth.aux):.2e}, tolerance {BF16_AUX_RTOL:.0e})"
                     f"{'' if fails(ctx, aux_loss) else causes.bf16_aux(run, seen)}")


# -- the input and k -----------------------------------------------------------------------------

@CHECKS.add("input-unchanged", "x is left as it was")
def input_unchanged(ctx):
    all_runs = main_runs(ctx) + runs(ctx, scn.BF16, "bf16") + runs(ctx, scn.MAIN[:1], "no-grad", requires_grad=False)
    if not any(r.calls.router_calls or r.calls.expert_calls for r in all_runs):
        nothing_to_check("moe_forward called neither the router nor an expert")
    for run in all_runs:
        after = run.x.detach()
        problem = mismatch(after, run.x_before, EXACT, what="values of x", against="before the call", yours="now",
                           exact_dtype=True)
        if problem:
            needs = "" if run.x.requires_grad else " (x not requiring grad)"
            fail(f"{where(run)}{needs}: x changed in the call: {problem}{causes.changed_input(run.x_before, after.cpu())}")


@CHECKS.add("validation", f"ValueError for k of {', '.join(map(str, scn.BAD_K))} and E + 1")
def validation(ctx):
    case = scn.VALIDATION
    for k in (*scn.BAD_K, case.experts + 1):
        inputs = scn.build(case, ctx.device)
        words = f"k={k} with E={case.experts} experts"
        try:
            out = ctx.solution.moe_forward(inputs.x, inputs.router, inputs.experts, k=k)
        except ValueError:
            continue
        except Exception as exc:  # noqa: BLE001 - the wrong exception is the finding
            fail(f"{words}: expected ValueError (k must be between 1 and E), got {type(exc).__name__}: "
                 f"{str(exc)[:200]}")
        fail(f"{words}: expected ValueError (k must be between 1 and E), but it returned a "
             f"{type(out).__name__}")
