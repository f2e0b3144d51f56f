"""Check helpers shared by the two accumulation exercises (grad_accumulation, ddp_accumulation).

Both read a solution's run as an ordered list of events. Single-process runs log `Event` objects
and DDP ranks send dicts over JSON, so these helpers take plain `(kind, info)` pairs; `pairs()`
makes them from either.
"""

from __future__ import annotations

from collections.abc import Iterable

# Why a group's gradient differs from the big batch's, by scenario (the same grouping in both exercises).
ADVICE = {
    "divisible": "with equal sizes each micro-batch's mean loss is weighted 1 / accum_steps (= n_i / N)",
    "trailing": "the trailing group's micro-batches are weighted by that group's own size (1 micro-batch: "
                "weight 1, not 1 / accum_steps)",
    "short-last": "weight each micro-batch's mean loss by n_i / N, its share of the group's samples "
                  "(here 8/10 and 2/10 in the last group), not 1 / accum_steps",
}
REMAINDER_ADVICE = ("the trailing group is every micro-batch after the last full group, stepped once and weighted "
                    "by its own size")


def pairs(events: Iterable) -> list[tuple[str, dict]]:
    """(kind, info) for each event, whether it is an instrument.Event or a rank's dict."""
    out = []
    for e in events:
        if isinstance(e, dict):
            out.append((e["kind"], e))
        else:
            out.append((e.kind, e.info))
    return out


def zeroing_problem(events: Iterable, grads_left: int, largest_left: float) -> str | None:
    """What is wrong with when gradients were zeroed, or None.

    The contract: each group ends in exactly one optimizer.step() followed by zeroed gradients, and
    nothing zeroes them inside a group. So a group's first backward starts from zero, no later
    backward does, and nothing is left in .grad when the function returns. `grads_left` and
    `largest_left` describe .grad after the return.
    """
    group, seen_backward, zeroed_after_backward = 1, 0, False
    for kind, info in pairs(events):
        if kind == "opt.step":
            group, seen_backward, zeroed_after_backward = group + 1, 0, False
        elif kind == "zero_grad" and seen_backward:
            zeroed_after_backward = True
        elif kind == "backward":
            if seen_backward == 0 and not info.get("grads_zero", True):
                return (f"group {group}'s first backward() started from gradients left over from the group before; "
                        f"zero the gradients after each optimizer.step()")
            if seen_backward and (zeroed_after_backward or info.get("grads_zero")):
                return (f"in group {group}, backward() number {seen_backward + 1} started from zeroed gradients, so "
                        f"the earlier micro-batches' gradients were thrown away; zero only after the group's "
                        f"optimizer.step()")
            seen_backward += 1
    if grads_left:
        return (f"after the function returned, {grads_left} parameters still held gradients (largest |grad| "
                f"{largest_left:.3g}): the last group's gradients were never zeroed; each group ends with "
                f"optimizer.step() followed by zeroed gradients (zeroing at the start of each group instead leaves "
                f"the last one's behind)")
    return None


def clip_order_problem(events: Iterable) -> tuple[int, int, str | None]:
    """(clip calls, optimizer steps, a problem with their order or None): each step comes right after a clip."""
    seq = [kind for kind, _ in pairs(events) if kind in ("backward", "clip", "opt.step")]
    clips, steps = seq.count("clip"), seq.count("opt.step")
    last = None
    for kind in seq:
        if kind == "opt.step" and last != "clip":
            before = "nothing" if last is None else f"a {last}()" if last != "opt.step" else "another step"
            return clips, steps, (f"an optimizer.step() was not directly preceded by clipping (it came after "
                                  f"{before}); clip after the group's last backward()")
        last = kind
    return clips, steps, None
