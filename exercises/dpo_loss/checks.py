"""Behavioural checks for dpo_loss: sequence_logprobs on small batches built here (tokens.py) against
the reference's float64 sums, and dpo_loss on preference pairs (pairs.py) against the reference's loss,
rewards and gradients; a wrong answer is named by the usual mistake it matches."""

from __future__ import annotations

import math

import torch

from quizapp.checking.harness import (
    CheckFailed,
    Checks,
    CheckSkipped,
    ForeignSkip,
    Required,
    Tol,
    cause_if,
    consequence,
    fail,
    fmt,
    is_close,
    mismatch,
    nothing_to_check,
    sibling_module,
)

tk = sibling_module(__file__, "tokens")
pairs = sibling_module(__file__, "pairs")

CHECKS = Checks(
    Required("sequence_logprobs", "(logits, input_ids, loss_mask) -> torch.Tensor", sample_args=(None, None, None)),
    Required("dpo_loss", "(policy_chosen_logps, policy_rejected_logps, ref_chosen_logps, ref_rejected_logps, *, "
                         "beta=0.1, label_smoothing=0.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]",
             sample_args=(None, None, None, None), sample_kwargs={"beta": 0.1, "label_smoothing": 0.0}),
)

CPU = torch.device("cpu")
# (logits dtype, mask kind, seed): the contract's float64 and float32 sums, with each kind of mask.
SUM_CASES = ((torch.float64, "bool", 1), (torch.float64, "int64", 2), (torch.float32, "float", 3),
             (torch.float32, "bool", 4))
GRAD_TOL = Tol(rtol=1e-10, atol=1e-10)
# The contract's bound for half-precision logits: a float32 result this close to the float64 sum of the same
# values. The reference is 1e-7 of the sum off it; log_softmax taken in the half type and summed in float32 is
# off by its rounding, 1e-4 of the sum in bfloat16 and 1e-5 in float16, which on these seeds misses the bound
# on every row, by 25x (bfloat16) and 7x (float16).
LOW_TOL = Tol(rtol=1e-5, atol=1e-4)
LOW_SEEDS = {torch.bfloat16: 56, torch.float16: 59}
BIG_TOL = Tol(rtol=1e-5, atol=1e-2)
NAN = float("nan")
BAD_ARGUMENTS = (("beta", 0.0), ("beta", -0.1), ("beta", NAN),
                 ("label_smoothing", -0.1), ("label_smoothing", 0.5), ("label_smoothing", 0.7), ("label_smoothing", NAN))
GOOD_ARGUMENTS = (("beta", 1e-3), ("label_smoothing", 0.49))


# -- failures that follow from another check's ------------------------------------------------------

def fails(ctx, check) -> bool:
    """Whether `check` fails (or stops on an error) for this solution: a later failure may follow from it."""

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


# -- sequence_logprobs -------------------------------------------------------------------------------

def sum_runs(ctx):
    def go():
        out = []
        for dtype, mask, seed in SUM_CASES:
            batch = tk.make_batch(ctx.device, dtype=dtype, mask=mask, seed=seed)
            out.append((batch, tk.call(ctx, batch)))
        return out

    return ctx.cached("sums", go)


@CHECKS.add("logprobs-sum", "sequence_logprobs sums log_softmax(logits[t - 1])[input_ids[t]] over the response tokens "
            "t >= 1 (float64 and float32; bool, int and float masks)")
def logprobs_sum(ctx):
    for batch, run in sum_runs(ctx):
        want = tk.truth(batch, ctx.reference)
        expected = tk.result_dtype(batch.logits.dtype)
        seen = run.out.double().cpu()
        dtype = (f"; the result is {tk.dtype_name(run.out.dtype)}, where {tk.dtype_name(batch.logits.dtype)} logits "
                 f"give {tk.dtype_name(expected)}" if run.out.dtype != expected else "")
        if dtype and is_close(seen, want, tk.TOLS[torch.float32]):
            upcast = (": upcast only float16 and bfloat16 (logits.float() turns float64 logits into float32)"
                      if expected == torch.float64 else "")
            fail(f"{batch.where}: the sums are right to float32's precision{dtype}{upcast}")
        tol = tk.TOLS[expected]
        off = tk.sums_differ(batch, seen, want, tol, lambda r: tk.row_sums_text(batch, r, float(want[r])))
        if off:
            fail(f"{batch.where}: {off[0]}{tk.diagnose(run.out, batch, tol, off[1])}{dtype}")
        if dtype:
            fail(f"{batch.where}: the sums are right{dtype}")


@CHECKS.add("logprobs-gradient", "The gradient to the logits equals the reference's (float64, 1e-10)")
def logprobs_gradient(ctx):
    with follows(ctx, logprobs_sum):
        for batch, run in sum_runs(ctx):
            if batch.logits.dtype != torch.float64:
                continue
            if run.grad is None:
                fail(f"{batch.where}: the result does not require grad though the logits do: it is cut off from them "
                     "(torch.no_grad(), .detach(), .item() or torch.tensor(...) of its values). The policy's "
                     "log-probs are what DPO trains: the gradient must flow back to the logits")
            problem = mismatch(run.grad, tk.truth_grad(batch, ctx.reference), GRAD_TOL, what="gradient entries",
                               against="the reference's")
            if problem:
                fail(f"{batch.where}: the gradient of (out * {list(tk.ROW_WEIGHTS)}).sum() w.r.t. the logits: {problem}")


@CHECKS.add("logprobs-masked-ids", "-100 in input_ids where loss_mask is false (prompt, padding, position 0) is "
            "never used as an index: the same sums as with ordinary ids there")
def logprobs_masked_ids(ctx):
    # On the CPU whatever the device: on CUDA, gather with -100 is a device-side assert that poisons the
    # context for every later check, where the CPU raises an error the check can report.
    for dtype, mask, seed in ((torch.float32, "bool", 11), (torch.float64, "int64", 12)):
        batch = tk.make_batch(CPU, dtype=dtype, mask=mask, seed=seed)
        plain = tk.call(ctx, batch, grad=False)
        tk.summed_nothing(plain)
        padded = batch.padded_ids()
        where = (f"{batch.where}, input_ids = -100 at the {int((padded == tk.PAD).sum())} positions where loss_mask "
                 "is false (prompt, padding, position 0)")
        try:
            run = tk.call(ctx, batch, ids=padded, grad=False, where=where)
        except (CheckFailed, CheckSkipped, ForeignSkip):
            raise
        except Exception as exc:  # noqa: BLE001 - the crash on these ids is the finding
            fail(f"{where}: your function raised {tk.raised(ctx, exc)}, though it runs with ordinary ids there. -100 "
                 "is Hugging Face's label pad, and an id where loss_mask is false must never be used as an index: "
                 "give gather a valid one first (torch.where(mask, input_ids, 0)), then drop those positions")
        problem = mismatch(run.out, plain.out, tk.TOLS[torch.float32], what="row sums",
                           against="yours with ordinary ids there")
        if problem:
            fail(f"{where}: {problem}. Ids at positions the mask excludes changed the result, so they reached it: "
                 "apply the mask to every term, and never index with those ids")


@CHECKS.add("logprobs-low-precision", "bfloat16 and float16 logits: a float32 result within 1e-5 of the same sums "
            "on the same values as float64 logits")
def logprobs_low_precision(ctx):
    for dtype, seed in LOW_SEEDS.items():
        batch = tk.make_batch(ctx.device, dtype=dtype, mask="bool", seed=seed, scale=3.0, rows=tk.LONG_ROWS,
                              length=tk.LONG_LENGTH, vocab=tk.LONG_VOCAB)
        name = tk.dtype_name(dtype)
        own = tk.call(ctx, batch, logits=batch.logits.double(), grad=False,
                      where=batch.where.replace(name, "float64", 1) + " (the same values)")
        tk.summed_nothing(own)
        low = tk.call(ctx, batch, grad=False)
        if low.out.dtype != torch.float32:
            cause = (f"the logits were not upcast: log_softmax, gather and the sum ran in {name}, which keeps "
                     f"{torch.finfo(dtype).nmant + 1} significant bits. Upcast the logits (logits.float()) before "
                     "log_softmax" if low.out.dtype == dtype else "computing in float64 inside is fine, but return "
                     "float32")
            fail(f"{batch.where}: the result is {tk.dtype_name(low.out.dtype)}; expected float32: {cause}")
        seen, want = low.out.double().cpu(), own.out.double().cpu()
        off = tk.sums_differ(batch, seen, want, LOW_TOL,
                             lambda r: f"{fmt(float(want[r]))}, what your function gives for the same values as "
                                       f"float64 logits, off by {float((seen[r] - want[r]).abs()):.3g}")
        if off:
            cause = (f"; that is log_softmax taken in {name}, only its result upcast: each log-probability is rounded "
                     f"to {name}'s precision ({torch.finfo(dtype).eps:.1e} of itself) and the errors add up over the "
                     "tokens. Upcast the logits before log_softmax"
                     if is_close(seen, tk.low_precision_variant(batch), LOW_TOL) else
                     f"; part of the computation ran in {name}: upcast the logits before log_softmax")
            fail(f"{batch.where}: {off[0]}{cause}")


@CHECKS.add("logprobs-large-logits", "Logits of magnitude 1e4: finite sums and gradient, equal to the reference's")
def logprobs_large_logits(ctx):
    batch = tk.make_batch(ctx.device, dtype=torch.float32, mask="bool", seed=21, scale=tk.BIG)
    run = tk.call(ctx, batch)
    want = tk.truth(batch, ctx.reference)
    seen = run.out.double().cpu()
    bad = ~seen.isfinite()
    if bool(bad.any()):
        r = int(bad.nonzero()[0])
        fail(f"{batch.where}: {batch.row_text(r)} gives {float(seen[r])}; expected {fmt(float(want[r]))}. For logits "
             "1e4 apart the softmax underflows to exactly 0 and log(0) = -inf (and -inf times a 0 of the mask is "
             "NaN): take F.log_softmax (logits - logsumexp), never torch.log(F.softmax(...))")
    if run.grad is not None and not bool(run.grad.isfinite().all()):
        count = int((~run.grad.isfinite()).sum())
        fail(f"{batch.where}: the sums are finite, but {count} of {run.grad.numel()} gradient entries of the logits are "
             "inf or NaN: a log of an underflowed softmax (or a division by it) somewhere on the way; take "
             "F.log_softmax and mask with torch.where")
    with follows(ctx, logprobs_sum):
        off = tk.sums_differ(batch, seen, want, BIG_TOL, lambda r: tk.row_sums_text(batch, r, float(want[r])))
        if off:
            fail(f"{batch.where}: {off[0]}{tk.diagnose(run.out, batch, BIG_TOL, off[1])}")


@CHECKS.add("logprobs-inputs-unchanged", "sequence_logprobs leaves logits, input_ids and loss_mask as they were")
def logprobs_inputs_unchanged(ctx):
    for mask, seed in (("bool", 31), ("int64", 32), ("float", 33)):
        batch = tk.make_batch(CPU, dtype=torch.float32, mask=mask, seed=seed)
        for ids, what in ((batch.padded_ids(), ", input_ids = -100 where loss_mask is false"), (batch.ids, "")):
            given = {"logits": batch.logits.clone(), "input_ids": ids.clone(), "loss_mask": batch.mask.clone()}
            before = {name: t.clone() for name, t in given.items()}
            where = batch.where + what
            try:
                with ctx.given(where):
                    out = ctx.solution.sequence_logprobs(given["logits"], given["input_ids"], given["loss_mask"])
                break
            except (CheckFailed, CheckSkipped, ForeignSkip):
                raise
            except Exception:  # noqa: BLE001 - -100 as an index is the masked-ids check's to report
                if not what:
                    raise
        for name, now in given.items():
            changed = now != before[name]
            if bool(changed.any()):
                at = tuple(int(i) for i in changed.nonzero()[0])
                fail(f"{where}: the call changed {int(changed.sum())} of {now.numel()} entries of {name} (at {list(at)}: "
                     f"{fmt(before[name][at].item())} became {fmt(now[at].item())}): {tk.INPUT_CAUSES[name]}")
    tk.summed_nothing(tk.Run(tk.vector(out, len(batch.rows), where).detach(), None, False))


# -- dpo_loss ------------------------------------------------------------------------------------------

def pair_runs(ctx):
    def go():
        return [pairs.call(ctx, pairs.make_logps(50 + i), case, dtype, ctx.device,
                           where=f"{tk.dtype_name(dtype)} log-probs of {pairs.PAIRS} pairs, {pairs.case_text(case)}")
                for i, case in enumerate(pairs.GRID) for dtype in pairs.DTYPES]

    return ctx.cached("pairs", go)


@CHECKS.add("dpo-loss-value", "dpo_loss's loss is the mean over pairs of -(1 - ls)·logsigmoid(βz) - ls·logsigmoid(-βz) "
            "(β from 0.02 to 1, ls from 0 to 0.45, and the defaults)")
def dpo_loss_value(ctx):
    runs = pair_runs(ctx)
    for run in runs:
        seen, (want, _, _) = pairs.loss_of(run), pairs.expected(ctx, run)
        tol = pairs.TOLS[run.dtype]
        problem = mismatch(seen, want, tol, against="the cDPO loss")
        if problem:
            beta, ls = run.beta_ls
            why = pairs.diagnose_loss(seen, run.logps, beta, ls, tol)
            if run.case is None and any(r.case == pairs.DEFAULTS and r.dtype == run.dtype
                                        and is_close(pairs.loss_of(r), pairs.expected(ctx, r)[0], tol) for r in runs):
                why += ("; with beta=0.1, label_smoothing=0.0 passed explicitly your loss is right: the defaults in "
                        "your signature must be beta=0.1, label_smoothing=0.0")
            fail(f"{run.where}: {problem}{why}")


@CHECKS.add("dpo-rewards", "The rewards are β·(policy - ref) of the chosen and of the rejected responses, detached")
def dpo_rewards(ctx):
    for run in pair_runs(ctx):
        beta, _ = run.beta_ls
        _, *want = pairs.expected(ctx, run)
        for which, (name, got) in enumerate((("chosen_rewards", run.chosen_rewards),
                                              ("rejected_rewards", run.rejected_rewards))):
            tol = pairs.TOLS[run.dtype]
            problem = mismatch(got, want[which], tol, what=f"{name} entries", against="β·(policy - ref)")
            if problem:
                why = next((f"; your {name} are {what}" for what, value in pairs.reward_variants(run.logps, beta, which)
                            if isinstance(got, torch.Tensor) and is_close(got, value, tol)), "")
                fail(f"{run.where}: {name}: {problem}{why}")
            if got.requires_grad:
                fail(f"{run.where}: {name} requires grad: it is still attached to the policy's graph. The rewards are "
                     "for logging (and reward accuracy); a caller that adds them up keeps the graph alive, and one "
                     "that backpropagates through them trains on them: return them .detach()ed")


@CHECKS.add("dpo-policy-gradients", "loss.backward() gives both policy inputs the reference's gradients (float64, 1e-8)")
def dpo_policy_gradients(ctx):
    with follows(ctx, dpo_loss_value):
        for run in pair_runs(ctx):
            if run.dtype != torch.float64:
                continue
            pairs.loss_of(run)
            if not run.loss_requires_grad:
                fail(f"{run.where}: the loss does not require grad, though policy_chosen_logps and policy_rejected_logps "
                     "do: it is cut off from the policy (a .detach(), torch.no_grad(), .item(), or a loss built from "
                     "the detached rewards), so loss.backward() raises and the policy never trains")
            for i, want in enumerate(pairs.expected(ctx, run, grads=True)):
                got = run.grads[i]
                if got is None:
                    fail(f"{run.where}: {pairs.NAMES[i]}.grad is None after loss.backward(): the loss does not depend "
                         "on it")
                problem = mismatch(got, want, pairs.GRAD_TOL, what="gradient entries", against="the reference's")
                if problem:
                    fail(f"{run.where}: {pairs.NAMES[i]}.grad: {problem}")


@CHECKS.add("dpo-reference-frozen", "No gradient reaches the reference log-probs, even when they require grad")
def dpo_reference_frozen(ctx):
    run = pairs.call(ctx, pairs.make_logps(70), (0.5, 0.2), torch.float64, ctx.device, refs_require_grad=True,
                     where=f"float64 log-probs of {pairs.PAIRS} pairs, all four requiring grad, beta=0.5, "
                           "label_smoothing=0.2")
    pairs.loss_of(run)
    if not run.loss_requires_grad:
        nothing_to_check("the loss carries no gradient at all, so no backward ran")
    for i in (2, 3):
        got = run.grads[i]
        if got is not None:
            policy = run.grads[i - 2]
            mirror = (f", exactly minus {pairs.NAMES[i - 2]}.grad" if policy is not None
                      and is_close(got, -policy, pairs.GRAD_TOL) else "")
            fail(f"{run.where}: after loss.backward(), {pairs.NAMES[i]}.grad is {fmt(got[:4].tolist())}... "
                 f"(nonzero in {int(got.ne(0).sum())} of {got.numel()} entries{mirror}); it must stay None: the "
                 "reference log-probs were not detached. The reference model is frozen: detach them (or compute them "
                 "under torch.no_grad()) so that no gradient flows into it")


@CHECKS.add("dpo-large-margins", "Margins z of ±2e4 (β 0.5 and 1): a finite loss and finite gradients, equal to the "
            "reference's")
def dpo_large_margins(ctx):
    for dtype in pairs.DTYPES:
        for beta, ls in pairs.BIG_CASES:
            run = pairs.call(ctx, pairs.big_logps(), (beta, ls), dtype, ctx.device,
                             where=f"{tk.dtype_name(dtype)} log-probs with margins z = {list(pairs.BIG_MARGINS)}, "
                                   f"beta={beta}, label_smoothing={ls}")
            seen, (want, _, _) = pairs.loss_of(run), pairs.expected(ctx, run)
            if not math.isfinite(seen):
                fail(f"{run.where}: the loss is {seen}; expected {fmt(want)}. At βz = -2e4, sigmoid(βz) underflows "
                     "to exactly 0 and log(0) = -inf: use F.logsigmoid (or -F.softplus(-x)), never "
                     "torch.log(torch.sigmoid(x))")
            for i in (0, 1):
                got = run.grads[i]
                if got is not None and not bool(got.isfinite().all()):
                    fail(f"{run.where}: the loss is finite, but {pairs.NAMES[i]}.grad holds "
                         f"{int((~got.isfinite()).sum())} inf or NaN entries: take F.logsigmoid, whose gradient "
                         "sigmoid(-x) stays finite")
            with follows(ctx, dpo_loss_value):
                problem = mismatch(seen, want, pairs.TOLS[dtype], against="the cDPO loss")
                if problem:
                    fail(f"{run.where}: {problem}{pairs.diagnose_loss(seen, run.logps, beta, ls, pairs.TOLS[dtype])}")


ARGUMENT_RULES = {
    "beta": ("beta must be > 0", "`beta <= 0` is False for NaN, as is every comparison with it: write "
                                 "`if not beta > 0: raise ValueError(...)`"),
    "label_smoothing": ("label_smoothing must be in [0, 0.5): at 0.5 the loss no longer depends on which response "
                        "was chosen", "`ls < 0 or ls >= 0.5` is False for NaN, as is every comparison with it: "
                                      "write `if not 0 <= ls < 0.5: raise ValueError(...)`"),
}


@CHECKS.add("dpo-validation", "ValueError for beta of 0, -0.1 or NaN and label_smoothing of -0.1, 0.5, 0.7 or NaN; "
            "beta=1e-3 and label_smoothing=0.49 accepted")
def dpo_validation(ctx):
    logps = [t.to(ctx.device) for t in pairs.make_logps(90)]
    for name, value in BAD_ARGUMENTS + GOOD_ARGUMENTS:
        kwargs = {"beta": 0.1, "label_smoothing": 0.0, name: value}
        words = f"dpo_loss(..., beta={kwargs['beta']}, label_smoothing={kwargs['label_smoothing']})"
        good = (name, value) in GOOD_ARGUMENTS
        try:
            out = ctx.solution.dpo_loss(*(t.clone() for t in logps), **kwargs)
        except (CheckFailed, CheckSkipped, ForeignSkip):
            raise
        except Exception as exc:  # noqa: BLE001 - which exception, and whether any, is the finding
            if good:
                fail(f"{words} raised {tk.raised(ctx, exc)}; {name}={value} is valid ({ARGUMENT_RULES[name][0]})")
            if isinstance(exc, ValueError):
                continue
            fail(f"{words}: expected ValueError ({ARGUMENT_RULES[name][0]}), got {tk.raised(ctx, exc)}")
        if good:
            continue
        loss = out[0] if isinstance(out, (tuple, list)) and out else out
        shown = fmt(float(loss.detach().double().sum())) if isinstance(loss, torch.Tensor) else repr(loss)
        nan = f"; {ARGUMENT_RULES[name][1]}" if math.isnan(value) else ""
        fail(f"{words}: expected ValueError ({ARGUMENT_RULES[name][0]}), but it returned a loss of {shown}{nan}")
