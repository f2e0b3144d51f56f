"""What magnitude_pruning's runs show beyond pass or fail, for the checks' messages to name a cause:
which layers a pruning left whole, what a ranking among the survivors picks, which survivors never
trained."""

from __future__ import annotations

import torch

from quizapp.checking.harness import listed, sibling_module

nets = sibling_module(__file__, "nets")
runs = sibling_module(__file__, "runs")

KIND = {2: "nn.Linear", 4: "nn.Conv2d"}  # by the weight's number of dimensions, in nets.Net


def kept_whole(run, k: int):
    """When the call zeroed weights in some layers and none in others that one global ranking of `k`
    would reach: (which layers kept every weight, the one layer type that lost weights or None, how many
    weights that type has); else None."""
    originals = [run.originals[f"{n}.weight"] for n in run.names]
    reached = [bool(m.any()) for m in nets.split(nets.smallest(originals, k), originals)]
    zeros = [int((w == 0).sum()) for w in run.seen.used]
    whole = [n for n, z, r in zip(run.names, zeros, reached) if r and not z]
    if not whole or not any(zeros):
        return None
    kinds = [KIND.get(w.dim(), "layer") for w in run.seen.used]
    untouched = sorted({t for t in kinds if not any(z for z, t2 in zip(zeros, kinds) if t2 == t)})
    touched = sorted(set(kinds) - set(untouched))
    if untouched:
        names = [n for n, t in zip(run.names, kinds) if t in untouched]
        phrase = f"every {' and every '.join(untouched)} ({listed(names)}) kept all its weights"
    else:
        phrase = f"{listed(whole)} kept every weight"
    if len(touched) != 1 or not untouched:
        return phrase, None, 0
    return phrase, touched[0], sum(w.numel() for w, t in zip(run.seen.used, kinds) if t == touched[0])


def among_alive(values, dead, amount) -> torch.Tensor:
    """One flat bool tensor over all layers: `dead`, and the round(amount * alive) weights of smallest
    |value| among the others, all layers ranked together."""
    want = dead.clone()
    k = round(amount * int((~dead).sum()))
    if k:
        idx = (~dead).nonzero().squeeze(1)
        flat = torch.cat([w.abs().flatten() for w in values])
        want[idx[torch.topk(flat[idx], k, largest=False).indices]] = True
    return want


def survivor_steps(run) -> int:
    """How many forward passes of a training run to compare: up to the first that used a weight grown
    back, which changes every later step."""
    found = runs.regrowth(run)
    return found[0] if found else len(run.seen)


def frozen_negatives(trained):
    """In the first of `trained` ([(when, optimizer, run)]) where the surviving weights that kept their
    values while the twin moved them are the negative ones, all of them or nearly (a gradient freeze by
    w < eps that forgot abs()): (when, optimizer, step, how many, negative survivors, largest move of
    the twin's); else None."""
    for when, opt_name, run in trained:
        i = survivor_steps(run) - 1
        if i < 1:
            continue
        mine, truth, mine0, truth0 = (torch.cat([w.flatten() for w in s.used])
                                      for s in (run.seen[i], run.truth[i], run.seen[0], run.truth[0]))
        alive, shift = mine0 != 0, (truth - truth0).abs()
        frozen = alive & (mine == mine0) & (shift > 0)
        negative = alive & (mine0 < 0) & (shift > 0)
        n, n_negative = int(frozen.sum()), int(negative.sum())
        if n and not bool((frozen & ~negative).any()) and n >= 0.9 * n_negative:
            return when, opt_name, i, n, n_negative, shift[frozen].max().item()
    return None
