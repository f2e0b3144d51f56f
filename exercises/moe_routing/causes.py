"""moe_routing: the known mistake a wrong gate, output, aux_loss or input is, in words, found by
comparing it with what each mistake gives (truth.py). Loaded by path, never imported by name."""

from __future__ import annotations

import itertools

import torch
import torch.nn.functional as F

from quizapp.checking.harness import Tol, fmt, is_close, listed, plural, rel_diff, sibling_module

truth_of = sibling_module(__file__, "truth")
dispatch = sibling_module(__file__, "dispatch")
# Which mistake a wrong result matches: loose enough for any float32 order of the same operations, far
# tighter than the distance between two mistakes.
MATCH = Tol(rtol=1e-4, atol=1e-5)


def gates(where: str, run, seen: torch.Tensor, tol: Tol) -> str:
    """Words for the token whose gates (read through marker experts: `seen`, (T, E)) are furthest off,
    measured as `mismatch` measures it."""
    t, k = run.truth, run.case.k
    off = (seen - t.gates).abs() / (tol.atol + tol.rtol * t.gates.abs())
    token = int(off.amax(1).argmax())
    mine, theirs = seen[token], t.gates[token]
    chosen = sorted(t.chosen[token].tolist())
    used = [e for e in range(len(mine)) if float(mine[e]) != 0.0]
    head = (f"{where}: token {token}'s gates are {fmt([round(float(v), 4) for v in mine])} over experts "
            f"0..{len(mine) - 1}; expected {fmt([round(float(v), 4) for v in theirs])}")
    if not used:
        return head + ": no expert's output reached its y"
    if used != chosen:
        if len(used) == len(mine) > k:
            return head + (": every expert got a weight, as in a dense softmax mixture; only the k experts "
                           "torch.topk chooses do")
        return head + f": it used experts {listed(used)}, torch.topk of its probabilities chooses {listed(chosen)}"
    total = float(mine.sum())
    if abs(total - 1) > 1e-4:
        cause = ""
        if is_close(mine[chosen], t.probs[token, chosen], MATCH):
            cause = ": they are the k chosen probabilities themselves, not renormalised"
            if k == 1:
                cause += " (Switch Transformer's top-1 rule); with k = 1 the renormalised gate is p / p, exactly 1"
        return f"{head}; they sum to {total:.4g}, not 1{cause}. Divide the k chosen probabilities by their sum"
    return head


def output(run) -> str:
    """'; it matches a y where ...' when y is one of the usual mistakes."""
    for why, value in truth_of.y_variants(run.truth, run.case.k).items():
        if is_close(run.y, value, MATCH):
            return f"; it matches a y where {why}"
    return ""


def aux(run, seen: float) -> str:
    for why, value in truth_of.aux_variants(run.truth, run.case.k).items():
        if is_close(seen, value, MATCH):
            return f"; it matches an aux_loss where {why}"
    return ""


def tie(run) -> str:
    """Which experts the solution's y mixes for its worst token, when a tie decided that token's choice."""
    t, k = run.truth, run.case.k
    seen = run.y.detach().cpu().double()
    token = int((seen - t.y).abs().amax(1).argmax())
    probs = t.probs[token]
    chosen = sorted(t.chosen[token].tolist())
    border = float(probs[t.chosen[token, -1]])
    tied = [e for e in range(len(probs)) if float(probs[e]) == border]
    if len(tied) < 2:
        return ""
    for subset in itertools.combinations(range(len(probs)), k):
        kept = probs[list(subset)]
        mix = ((kept / kept.sum()).unsqueeze(-1) * t.outputs[token, list(subset)]).sum(0)
        if sorted(subset) != chosen and is_close(seen[token], mix, MATCH):
            origin = ("the router has identical rows for them" if bool(run.x_before[token].any())
                      else "the token is 0, so its logits are the router's bias alone")
            return (f"; token {token}'s y mixes experts {listed(subset)}, where torch.topk chooses {listed(chosen)}: "
                    f"experts {listed(tied)} tie at probability {border:.6g} ({origin}). A sort or argsort breaks ties "
                    "in another order than torch.topk; take the indices torch.topk(probs, k) returns")
    return ""


def bf16_y(run) -> str:
    """For the worst token of a bfloat16 y: the experts it mixes, when they are not torch.topk's choice
    and bfloat16 rounding would tie the probabilities that decide it."""
    t, k = run.truth, run.case.k
    seen = run.y.detach().cpu().double()
    token = int((seen - t.y).abs().amax(1).argmax())
    probs, chosen = t.probs[token], sorted(t.chosen[token].tolist())

    def distance(subset):
        kept = probs[list(subset)]
        mix = ((kept / kept.sum()).unsqueeze(-1) * t.outputs[token, list(subset)]).sum(0)
        return float((seen[token] - mix).abs().max())

    mixed = min(itertools.combinations(range(len(probs)), k), key=distance)
    if sorted(mixed) == chosen or distance(mixed) > distance(chosen) / 4:
        return ""
    lost, won = sorted(set(chosen) - set(mixed)), sorted(set(mixed) - set(chosen))
    rounded = probs[lost + won].float().bfloat16().double()
    if not bool((rounded == rounded[0]).all()):
        return f"; token {token}'s y mixes experts {listed(mixed)}, where torch.topk chooses {listed(chosen)}"
    shown = ", ".join(f"{float(probs[e]):.5f}" for e in lost + won)
    return (f"; token {token}'s y mixes experts {listed(mixed)}, where torch.topk of the float32 probabilities "
            f"chooses {listed(chosen)}: experts {listed(lost + won)} have probabilities {shown}, which bfloat16 rounds "
            f"to the same {float(rounded[0]):.5f}, so a bfloat16 softmax ties them and torch.topk picks another. The "
            "softmax runs in float32: F.softmax(logits, dim=-1, dtype=torch.float32)")


def bf16_aux(run, seen: float) -> str:
    """Name the precision mistake a bfloat16 aux_loss matches: the closest of the variants, when it is
    four times closer than the truth."""
    inputs, k, n = run.inputs, run.case.k, run.case.experts
    with torch.no_grad():
        low = torch.softmax(inputs.router(inputs.x), dim=-1)
        bias = None if inputs.router.bias is None else inputs.router.bias.float()
        wide = torch.softmax(F.linear(inputs.x.float(), inputs.router.weight.float(), bias), dim=-1)
    found = {
        "P (and f's choice) came from a softmax in bfloat16, each probability rounded to 8 bits, as HF's "
        "load_balancing_loss_func does when it re-applies softmax to bfloat16 logits; take P from the float32 probs "
        "(F.softmax(logits, dim=-1, dtype=torch.float32)) that route the tokens": low,
        "the router ran in float32 (Switch Transformer's selective precision); here, as in Mixtral, the logits are "
        "router(x) in x's dtype and only the softmax runs in float32": wide,
    }
    best, why_best = rel_diff(seen, run.truth.aux) / 4, ""
    for why, probs in found.items():
        f = truth_of.counts(torch.topk(probs.float(), k, dim=-1).indices.cpu(), n)
        # P averaged in the probabilities' own dtype, or in float64: a solution may do either.
        for mean in (probs.mean(0).double().cpu(), probs.double().cpu().mean(0)):
            off = rel_diff(seen, n * float((f * mean).sum()))
            if off < best:
                best, why_best = off, why
    if why_best:
        return f"; it matches an aux_loss where {why_best}"
    return ("; the float32 cases are right, so precision was lost on the way: compute the softmax in float32 "
            "(dtype=torch.float32) from router(x)")


def changed_input(before: torch.Tensor, after: torch.Tensor) -> str:
    if before.shape != after.shape or before.dtype != after.dtype:
        return f": it is now {after.dtype} of shape {tuple(after.shape)}, it was {before.dtype} {tuple(before.shape)}"
    moved = (before != after).any(1).nonzero().flatten().tolist()
    rows = dispatch.rows_of_x(after, before, list(range(len(before))))
    if sorted(rows) == list(range(len(before))):
        return (f": its rows were reordered in place ({plural(len(moved), 'row')} moved; row {moved[0]} now holds what "
                f"was row {rows[moved[0]]}). Sorting tokens by expert works on a copy, x[order]")
    return f": {plural(len(moved), 'row')} changed (an in-place operation on x, or on a view of it)"
