"""Behavioural checks for mixup_cutmix: the grader hands mixup and cutmix the permutation, lam and the
box's centre, so the right answer is known exactly; each check reads back from the solution's output
which sample every row's pixels and second label came from, where its box lies and what weight each
label got, and compares soft_target_cross_entropy with F.cross_entropy on probability targets."""

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
    close_elements,
    consequence,
    fail,
    fmt,
    is_close,
    mismatch,
    nothing_to_check,
    sibling_module,
)

mx = sibling_module(__file__, "mixing")
bx = sibling_module(__file__, "boxes")
soft = sibling_module(__file__, "soft")

CHECKS = Checks(
    Required("mixup", "(x, y, *, num_classes, lam, perm) -> tuple[torch.Tensor, torch.Tensor]",
             sample_args=(None, None), sample_kwargs={"num_classes": 10, "lam": 0.5, "perm": None}),
    Required("cutmix", "(x, y, *, num_classes, lam, perm, center) -> tuple[torch.Tensor, torch.Tensor]",
             sample_args=(None, None), sample_kwargs={"num_classes": 10, "lam": 0.5, "perm": None, "center": (0, 0)}),
    Required("soft_target_cross_entropy", "(logits, targets) -> torch.Tensor", sample_args=(None, None)),
)

# Permutations with no fixed point that differ from their inverse, flip and square in most rows: a row's
# partner then tells which of them the solution used.
P6 = [2, 0, 4, 5, 1, 3]
P4 = [1, 2, 3, 0]
P3 = [2, 0, 1]
NUM_CLASSES = 10

# (samples, channels, height, width, lam, perm): both ends of lam, an involution, the identity, a fixed point.
MIXUP_CASES = [(6, 3, 4, 4, 0.7, P6), (4, 3, 5, 7, 0.25, [1, 0, 3, 2]), (5, 1, 4, 4, 0.5, [0, 1, 2, 3, 4]),
               (6, 3, 4, 4, 0.0, P6), (6, 3, 4, 4, 1.0, P6), (8, 2, 3, 3, 0.9, [3, 7, 0, 5, 1, 2, 6, 4])]
# (num_classes, lam, perm, labels or None for distinct ones): [0, 0, 2, 1] pairs row 0 with a sample of its
# own label, whose target is then 1.0 on that one class.
MIXUP_TARGET_CASES = [(10, 0.7, P6, None), (10, 0.25, P6, None), (3, 0.6, [1, 0, 3, 2], [0, 0, 2, 1]),
                      (7, 0.0, [1, 2, 3, 4, 0], None), (7, 1.0, [1, 2, 3, 4, 0], None), (5, 0.5, [0, 1, 2, 3], None)]
# (function, samples, channels, height, width, lam, perm, center)
LABEL_CASES = [("mixup", 6, 3, 4, 4, 0.7, P6, None), ("cutmix", 6, 3, 8, 8, 0.5, P6, (4, 4)),
               ("mixup", 4, 1, 3, 3, 0.4, P4, None), ("cutmix", 4, 2, 6, 10, 0.6, P4, (3, 5))]
# (samples, channels, height, width, lam, center, perm), the small ones first (their failures come with a
# picture): corners and edges that clip the box, a non-square image, an odd side, no box, a whole-image box.
BOX_CASES = [(4, 3, 8, 8, 0.75, (1, 1), P4), (4, 3, 8, 8, 0.75, (4, 4), P4), (3, 2, 12, 16, 0.6, (10, 3), P3),
             (4, 1, 16, 16, 0.75, (15, 0), P4), (3, 3, 8, 8, 1.0, (4, 4), P3), (3, 3, 9, 9, 0.0, (0, 8), P3),
             (2, 1, 32, 32, 0.7, (16, 16), [1, 0])]
# The bank's example first (32 x 32, lam 0.75, centre (4, 4): clipped to 12 x 12, weight 0.859375); an odd
# h = 17 (a 16 x 16 box: weight 0.75, neither lam = 0.7 nor 1 - 17 * 17 / 1024); two clipped sides; lam 1 and 0.
WEIGHT_CASES = [(4, 1, 32, 32, 0.75, (4, 4), P4), (4, 1, 32, 32, 0.7, (16, 16), P4), (3, 2, 12, 16, 0.6, (10, 3), P3),
                (4, 1, 16, 16, 0.3, (15, 0), P4), (4, 1, 8, 8, 1.0, (4, 4), P4), (4, 1, 8, 8, 0.0, (4, 4), P4)]
PLOT = (32, 0.75, 16)  # image side, lam, cy: the weight of y[0] as cx runs over 1..31 (x starts at 1 in a plot)
DTYPES = (torch.bfloat16, torch.float16, torch.float64)
# dtype -> (target weight tolerance, pixel tolerance as a fraction of max |x|): half types a few rounding
# steps; float64 far below float32's rounding (6e-8), so a lam rounded to float32 shows.
DTYPE_TOL = {torch.bfloat16: (2 * 2 ** -7, 2 * 2 ** -7), torch.float16: (2 * 2 ** -10, 2 * 2 ** -10),
             torch.float64: (1e-12, 1e-12)}
BAD_LAMS = (-0.1, 1.5, math.nan, math.inf)
BAD_PERMS = (([0, 0, 2, 3], "repeats 0 and lacks 1"), ([0, 1, 2], "has 3 entries for 4 samples"),
             ([1, 2, 3, 4], "holds 4, outside range(4)"))


def mix(ctx, fn, n, channels, height, width, lam, perm, center=None, seed=0, num_classes=NUM_CLASSES, y=None,
        dtype=torch.float32):
    x = mx.images(ctx, n, channels, height, width, seed, dtype)
    y = mx.labels(ctx, n, num_classes, seed) if y is None else torch.tensor(y, device=ctx.device)
    return mx.call(ctx, fn, x, y, lam, mx.as_perm(ctx, perm), num_classes, center)


def mixes(ctx) -> None:
    """Skip a check that a function mixing nothing passes (x left alone, x's dtype kept), when mixup and
    cutmix both hand x's own pixels back: then no mixing happened to judge."""

    def go():
        x, y = mx.images(ctx, 4, 3, 8, 8, seed=11), mx.labels(ctx, 4, NUM_CLASSES, seed=11)
        for fn, center in (("mixup", None), ("cutmix", (4, 4))):
            try:
                run = mx.call(ctx, fn, x, y, 0.5, mx.as_perm(ctx, P4), NUM_CLASSES, center)
            except Exception:  # noqa: BLE001 - an error is the cases' to report, with their inputs
                return False
            if not torch.equal(run.mixed.to(x.dtype), x):
                return False
        return True

    if ctx.cached("hands-x-back", go):
        nothing_to_check("mixup and cutmix (lam 0.5) both returned x's own pixels: nothing was mixed")


def first_bad(got, want, tol: Tol):
    """(count, index of the first entry) of got not close to want within tol."""
    bad = ~close_elements(got, want, tol)
    if not bad.any():
        return 0, ()
    return int(bad.sum()), tuple(int(v) for v in bad.nonzero()[0])


# -- mixup ---------------------------------------------------------------------------------------

def mixup_hint(ctx, run, got) -> str:
    x, lam, perm = run.x.double().cpu(), run.lam, run.perm.cpu()
    tol = mx.pixel_tol(run.x)
    swapped = (1 - lam) * x + lam * x[perm]
    if is_close(got, swapped, tol) and mx.folded_lam(ctx, run, lambda other: is_close(
            other.mixed.double().cpu(), swapped, tol)):
        return f" {mx.fold_text(lam)}."
    variants = {
        "lam weighs x[perm] and 1 - lam weighs x; lam is the weight of the sample itself": swapped,
        "it is x unchanged: nothing was mixed in": x,
        "the partner is scaled by lam as well (lam * (1 - lam) * x[perm]): x was scaled in place "
        "(x.mul_(lam)) before x[perm] was read from it": lam * x + (1 - lam) * lam * x[perm],
    }
    for why, v in variants.items():
        if is_close(got, v, tol):
            return f" Your mixed_x matches one where {why}."
    found = [mx.blend_source(run, i) for i in range(run.n)]
    wrong = [i for i, f in enumerate(found) if f is not None and f != int(perm[i])]
    if wrong:
        i = wrong[0]
        return (f" Row {i} is mixed with sample {found[i]}, not with perm[{i}] = {int(perm[i])}; your partners, row by "
                f"row: {found}, which is {mx.name_permutation(found, perm.tolist())}.")
    return ""


@CHECKS.add("mixup-pixels", "mixup: mixed_x = lam * x + (1 - lam) * x[perm] (lam 0 to 1, any perm)")
def mixup_pixels(ctx):
    for seed, (n, channels, height, width, lam, perm) in enumerate(MIXUP_CASES):
        run = mix(ctx, "mixup", n, channels, height, width, lam, perm, seed=seed)
        x, p = run.x.double().cpu(), run.perm.cpu()
        want, got = lam * x + (1 - lam) * x[p], run.mixed.double().cpu()
        count, at = first_bad(got, want, mx.pixel_tol(run.x))
        if count:
            i = at[0]
            fail(f"{run.where}: mixed_x differs from lam * x + (1 - lam) * x[perm] at {count} of {got.numel()} values; "
                 f"at {at}: x = {fmt(float(x[at]))}, x[perm] = x[{int(p[i])}] gives {fmt(float(x[p][at]))}, expected "
                 f"{fmt(float(want[at]))}, got {fmt(float(got[at]))}.{mixup_hint(ctx, run, got)}")


def targets_hint(ctx, run, t, classes) -> str:
    y, lam, k = run.y.cpu(), run.lam, run.num_classes
    sums = t.sum(dim=1)
    same = [i for i in range(run.n) if classes[i] == int(y[i])]
    swapped = mx.mixed_rows(y, classes, 1 - lam, k)
    if is_close(t, swapped, mx.WEIGHT_TOL) and mx.folded_lam(ctx, run, lambda other: is_close(
            mx.weights(other), swapped, mx.WEIGHT_TOL)):
        return f" {mx.fold_text(lam)}."
    variants = {
        "the weights are swapped: 1 - lam on the sample's own label and lam on its partner's": swapped,
        "the targets are one-hot y: the partner's label was not mixed in": mx.onehot(y, k),
        "the partner's label is missing (only lam * onehot(y))": lam * mx.onehot(y, k),
    }
    if same:
        assigned = mx.mixed_rows(y, classes, lam, k)
        for i in same:
            assigned[i, int(y[i])] = 1 - lam
        variants[f"a row whose partner has the same label (row {same[0]}) holds only 1 - lam on it: the second "
                 "assignment (t[i, y[perm[i]]] = 1 - lam) overwrote the first; add the two one-hot rows "
                 "(or scatter_add_), so that such a row gets lam + (1 - lam) = 1"] = assigned
    for why, v in variants.items():
        if is_close(t, v, mx.WEIGHT_TOL):
            return f" Your targets match ones where {why}."
    if not is_close(sums, torch.ones_like(sums), mx.WEIGHT_TOL):
        i = int((sums - 1).abs().argmax())
        return f" Row {i} sums to {fmt(float(sums[i]))}: each row must be a probability distribution (sum 1)."
    return ""


def smoothing_hint(ctx, run, t, classes, want, floor) -> str:
    """Why smoothed targets fail: the smoothing, and whatever else is wrong once it is taken out."""
    plain = mx.unsmooth(t, floor)
    if is_close(plain, want, mx.WEIGHT_TOL):
        return (f" That is because every class other than a row's labels holds {fmt(floor)}: the targets carry "
                f"{mx.smoothing_name(floor, run.num_classes)}; without it your targets are right. {mx.NO_SMOOTHING}.")
    text = mx.smoothing_text(floor, run.num_classes)
    other = targets_hint(ctx, run, plain, classes).strip()
    return f" {text}." + (f" Besides, with the smoothing taken out: {other}" if other else "")


MIXUP_TARGETS = "mixup: each target row is lam on its own label plus 1 - lam on its partner's"


@CHECKS.add("mixup-targets", MIXUP_TARGETS)
def mixup_targets(ctx):
    for seed, (k, lam, perm, y) in enumerate(MIXUP_TARGET_CASES):
        run = mix(ctx, "mixup", len(perm), 1, 2, 2, lam, perm, seed=20 + seed, num_classes=k, y=y)
        t = mx.weights(run)
        floor = mx.smoothing_floor(t)
        # The partner's label as the solution chose it (see labels-follow-pixels), read above any smoothing.
        classes = mx.partner_classes(run, t if floor is None else mx.unsmooth(t, floor))
        want = mx.mixed_rows(run.y, classes, lam, k)
        count, at = first_bad(t, want, mx.WEIGHT_TOL)
        if count:
            i, own = at[0], int(run.y[at[0]])
            what = (f"1.0 on class {own} (lam on its own label plus 1 - lam on its partner's, the same class)"
                    if classes[i] == own else
                    f"lam = {fmt(lam)} on its own label {own} and 1 - lam = {fmt(1 - lam)} on its partner's label "
                    f"{classes[i]}")
            hint = (targets_hint(ctx, run, t, classes) if floor is None else
                    smoothing_hint(ctx, run, t, classes, want, floor))
            fail(f"{run.where}: target row {i} (y[{i}] = {own}, partner perm[{i}] = {perm[i]}) should be {what}; got "
                 f"{mx.row_text(t[i], floor)}.{hint}")


@CHECKS.add("labels-follow-pixels", "Each row's second label is that of the sample its pixels came from, "
                                    "y[perm[i]] (mixup and cutmix)")
def labels_follow_pixels(ctx):
    paired = 0  # rows whose target names a second label
    for seed, (fn, n, channels, height, width, lam, perm, center) in enumerate(LABEL_CASES):
        run = mix(ctx, fn, n, channels, height, width, lam, perm, center, seed=40 + seed)
        t, y = mx.weights(run), run.y.cpu().tolist()
        found = [mx.label_source(run, t, i) for i in range(n)]
        pixels = [(mx.blend_source if fn == "mixup" else mx.box_source)(run, i) for i in range(n)]
        paired += sum(f is not None for f in found)
        # A row whose labels follow its (wrongly paired) pixels is the pixel checks' finding, not this one's.
        wrong = [i for i in range(n) if found[i] is not None and found[i] != perm[i] and found[i] != pixels[i]]
        if wrong:
            i, q = wrong[0], found[wrong[0]]
            fail(f"{run.where}: row {i}'s pixels are mixed with sample perm[{i}] = {perm[i]} (label {y[perm[i]]}), but "
                 f"its target gives {fmt(float(t[i, y[q]]))} to class {y[q]}, the label of sample {q}. The samples your "
                 f"labels were mixed with, row by row: {found} (perm: {perm}); that is "
                 f"{mx.name_permutation(found, perm)}. A label from another image than the pixels teaches the wrong "
                 "class: take the partner's label with the same perm as its pixels, y[perm]")
    if not paired:
        nothing_to_check(f"no target row in {len(LABEL_CASES)} calls gave weight to a second label, so there was no "
                         "partner's label to follow")


# -- cutmix ----------------------------------------------------------------------------------------

@CHECKS.add("cutmix-box", "cutmix: the clipped box [y0:y1, x0:x1] comes from x[perm], the rest from x "
                          "(corners, edges, odd sides, non-square images)")
def cutmix_box(ctx):
    for seed, (n, channels, height, width, lam, center, perm) in enumerate(BOX_CASES):
        run = mix(ctx, "cutmix", n, channels, height, width, lam, perm, center, seed=60 + seed)
        box = bx.contract_box(height, width, lam, center)
        inside = bx.mask_of(box, height, width).to(run.x.device)
        x = run.x
        want = torch.where(inside, x[run.perm], x)
        bad = ~close_elements(run.mixed, want, mx.pixel_tol(x))
        if bad.any():
            bad_rows = bad.flatten(1).any(1)
            fail(bx.box_problem(run, int(bad_rows.nonzero()[0]), box, height, width))


def weight_sweep(ctx) -> list:
    """The weight of y[0] for the box centre cx = 1..side - 1: the picture of clipping."""
    side, lam, cy = PLOT
    x, y = mx.images(ctx, 2, 1, side, side, seed=99), torch.tensor([0, 1], device=ctx.device)
    out = []
    for cx in range(1, side):
        run = mx.call(ctx, "cutmix", x, y, lam, mx.as_perm(ctx, [1, 0]), 2, (cy, cx))
        out.append(float(mx.weights(run)[0, 0]))
    return out


def plot_weights(ctx) -> None:
    side, lam, cy = PLOT
    h, _ = bx.sides(side, side, lam)
    try:
        yours = weight_sweep(ctx)
    except (CheckSkipped, ForeignSkip):
        raise
    except Exception:  # noqa: BLE001 - the cases below report the solution's error with their own inputs
        yours = []
    reference = [bx.kept_share(bx.contract_box(side, side, lam, (cy, cx)), side, side) for cx in range(1, side)]
    # Short: the plot is 70 to 80 columns wide, and plotext drops a title that does not fit.
    ctx.data["curves"] = {
        "title": f"cutmix: y[i]'s weight as the {h}x{h} box moves ({side}x{side}, lam {lam})",
        "x": f"box centre cx (cy {cy})", "y": "weight of y[i]",
        "series": {"yours": yours, "reference": reference, "drawn lam": [lam] * (side - 1)}}


@CHECKS.add("cutmix-label-weight", "cutmix: the label weight is the share of pixels kept after clipping the box, "
                                   "1 - box_area / (H * W), not the drawn lam")
def cutmix_label_weight(ctx):
    plot_weights(ctx)
    failures = []  # (message, (run, box, height, width), weight on the own label), one per failing case
    smoothed = []  # (message, floor) of the cases whose targets carry label smoothing
    for seed, (n, channels, height, width, lam, center, perm) in enumerate(WEIGHT_CASES):
        run = mix(ctx, "cutmix", n, channels, height, width, lam, perm, center, seed=80 + seed)
        box = bx.contract_box(height, width, lam, center)
        raw = mx.weights(run)
        floor = mx.smoothing_floor(raw)
        # The weights are judged with any smoothing taken out: the smoothing is a finding of its own.
        t = raw if floor is None else mx.unsmooth(raw, floor)
        classes = mx.partner_classes(run, t)
        kept = bx.kept_share(box, height, width)
        should = (f"{run.where}: the box is {box.text()} after clipping, {box.area} of {height * width} pixels, so "
                  f"sample {{i}} keeps 1 - {box.area} / {height * width} = {fmt(kept)} of its own pixels and its target "
                  f"should be {fmt(kept)} on its label {{label}} and {fmt(1 - kept)} on its partner's {{partner}}; got "
                  "{got}")
        if floor is not None and box.area:
            smoothed.append((should.format(i=0, label=int(run.y[0]), partner=classes[0],
                                           got=mx.row_text(raw[0], floor)), floor))
        for i in range(n):
            allowed = [kept]
            region = mx.pasted(run, i)
            if mx.box_source(run, i) is not None or not region.any():
                # A box of its own (the cutmix-box check's finding): the weight must fit the pixels it pasted.
                allowed.append(1 - int(region.sum()) / (height * width))
            if any(is_close(t[i], mx.mixed_rows(run.y[i:i + 1], classes[i:i + 1], w, run.num_classes)[0],
                            mx.WEIGHT_TOL) for w in allowed):
                continue
            own, label = float(t[i, int(run.y[i])]), int(run.y[i])
            mine = ""
            if len(allowed) > 1 and allowed[1] != kept:
                mine = (f"; your cutmix pasted {int(region.sum())} pixels into it (a kept share of {fmt(allowed[1])}), "
                        "which the weight does not fit either")
            unsmoothed = "" if floor is None else " once the smoothing is taken out"
            failures.append((
                should.format(i=i, label=label, partner=classes[i], got=mx.row_text(raw[i], floor))
                + f", {fmt(own)} on its own label{unsmoothed}{mine}.", (run, box, height, width), own))
            break
    if failures:
        also = f" Also, {mx.smoothing_text(smoothed[0][1], NUM_CLASSES)}." if smoothed else ""
        fail(f"{failures[0][0]}{bx.weight_hint(failures)}" + (f" ({len(failures)} of {len(WEIGHT_CASES)} cases fail.)"
                                                         if len(failures) > 1 else "") + also)
    if smoothed:
        text, floor = smoothed[0]
        cause = (f"; {consequence(MIXUP_TARGETS)}, which finds the same smoothing in mixup's targets"
                 if mixup_smooths(ctx) else f". {mx.NO_SMOOTHING}")
        fail(f"{text}. That is {mx.smoothing_name(floor, NUM_CLASSES)}, and under it the weights are the clipped "
             f"box's share, as they should be: the check fails for the smoothing alone{cause}")


def mixup_smooths(ctx) -> bool:
    """Whether mixup's targets carry label smoothing too, which the check "mixup-targets" names."""
    k, lam, perm, y = MIXUP_TARGET_CASES[0]
    try:
        run = mix(ctx, "mixup", len(perm), 1, 2, 2, lam, perm, seed=20, num_classes=k, y=y)
        return mx.smoothing_floor(mx.weights(run)) is not None
    except (CheckSkipped, ForeignSkip):
        raise
    except Exception:  # noqa: BLE001 - mixup's own errors are its checks' to report
        return False


# -- both -------------------------------------------------------------------------------------------

def dtype_cause(name, want, got) -> str:
    if name == "targets" and got == torch.float32:
        return ("F.one_hot(...).float(), or a tensor made without dtype= (torch.zeros, torch.full, torch.tensor make "
                "float32, as timm's one_hot does); build it with dtype=x.dtype or cast with .to(x.dtype). Beside "
                f"{mx.dtype_name(want)} logits a float32 target promotes the loss, and its backward, to float32")
    if name == "targets":
        return f"a cast to {mx.dtype_name(got)} (.to, .double(), .half()) or a tensor of that dtype; use x.dtype"
    return (f"something turned x into {mx.dtype_name(got)}: a cast (.float(), .double(), .to) or a tensor of that "
            "dtype in the formula (a mask or a weight tensor made without dtype=); a Python float lam keeps x's dtype")


@CHECKS.add("targets-shape-dtype", "targets are (N, num_classes) in x's dtype, and mixed_x keeps x's dtype "
                                   "(bfloat16, float16, float64)")
def targets_shape_dtype(ctx):
    # F.one_hot(y) without num_classes sizes the rows by the largest label in the batch: 6 + 1 = 7 here.
    run = mix(ctx, "mixup", 6, 1, 2, 2, 0.7, P6, num_classes=NUM_CLASSES, y=[0, 3, 6, 2, 5, 1], seed=5)
    if tuple(run.targets.shape) != (6, NUM_CLASSES):
        cause = (": F.one_hot(y) without num_classes= makes max(y) + 1 = 7 columns; pass num_classes"
                 if tuple(run.targets.shape) == (6, 7) else "")
        fail(f"{run.where}, labels {run.y.tolist()}: targets have shape {tuple(run.targets.shape)}, expected "
             f"(6, {NUM_CLASSES}), one column per class{cause}")
    for dtype in DTYPES:
        target_tol, pixel_tol = DTYPE_TOL[dtype]
        for fn, center in (("mixup", None), ("cutmix", (2, 5))):
            run = mix(ctx, fn, 6, 3, 8, 8, 0.7, P6, center, seed=7, dtype=dtype)
            for name, value in (("mixed_x", run.mixed), ("targets", run.targets)):
                if value.dtype != dtype:
                    fail(f"{run.where}: {name} is {mx.dtype_name(value.dtype)}, expected x's dtype "
                         f"{mx.dtype_name(dtype)}: {dtype_cause(name, dtype, value.dtype)}")
            if tuple(run.targets.shape) != (6, NUM_CLASSES):
                fail(f"{run.where}: targets have shape {tuple(run.targets.shape)}, expected (6, {NUM_CLASSES})")
            # The values: only where the float32 run of the same inputs is right (the other checks grade those).
            wide = mx.call(ctx, fn, run.x.float(), run.y, run.lam, run.perm, NUM_CLASSES, center)
            right = reference_pair(ctx, wide)
            if not (is_close(wide.mixed, right[0], mx.pixel_tol(run.x)) and is_close(wide.targets, right[1],
                                                                                      mx.WEIGHT_TOL)):
                continue
            exact = reference_pair(ctx, run)
            for name, got, want, tol in (("targets", run.targets, exact[1], Tol(atol=target_tol)),
                                         ("mixed_x", run.mixed, exact[0], Tol(atol=pixel_tol * mx.scale_of(run.x)))):
                problem = mismatch(got, want, tol, against="the formula")
                if problem:
                    diff = float((got.double() - want.double()).abs().max())  # NaN: no rounding to name
                    why = (" That is the size of float32 rounding: lam (or a weight) went through float32, e.g. "
                           "torch.tensor(lam) without dtype= (float32); keep lam a Python float, or make tensors "
                           "with dtype=x.dtype" if dtype == torch.float64 and diff < 1e-5 else "")
                    fail(f"{run.where}: {name} should equal the formula computed in {mx.dtype_name(dtype)}: "
                         f"{problem}, though your float32 result is right.{why}")
    mixes(ctx)


def reference_pair(ctx, run):
    kwargs = {"num_classes": run.num_classes, "lam": run.lam, "perm": run.perm}
    if run.center is not None:
        kwargs["center"] = run.center
    fn = ctx.reference.cutmix if run.center is not None else ctx.reference.mixup
    return fn(run.x.clone(), run.y, **kwargs)


@CHECKS.add("x-y-unchanged", "Neither function writes into x or y (timm's Mixup pastes into x in place)")
def x_y_unchanged(ctx):
    for fn, lam, center in (("mixup", 0.7, None), ("cutmix", 0.5, (2, 2)), ("cutmix", 0.75, (4, 4))):
        x, y, perm = mx.images(ctx, 4, 3, 8, 8, seed=3), mx.labels(ctx, 4, NUM_CLASSES, seed=3), mx.as_perm(ctx, P4)
        x_before, y_before = x.clone(), y.clone()
        where = mx.describe(fn, x, lam, perm, NUM_CLASSES, center)
        kwargs = {"num_classes": NUM_CLASSES, "lam": lam, "perm": perm.clone()}
        if center is not None:
            kwargs["center"] = center
        with ctx.given(where):
            out = getattr(ctx.solution, fn)(x, y, **kwargs)
        mixed, _ = mx.unpack(out, where)
        changed = x != x_before
        if changed.any():
            rows, cols = changed.any(dim=(0, 1, 3)).nonzero().flatten(), changed.any(dim=(0, 1, 2)).nonzero().flatten()
            place = (f"all within rows {int(rows[0])}:{int(rows[-1]) + 1}, columns {int(cols[0])}:{int(cols[-1]) + 1}, "
                     "the box" if int(changed.sum()) < changed.numel() else "every one of them")
            same = " and returned x itself" if mixed.data_ptr() == x.data_ptr() else ""
            how = ("x[:, :, y0:y1, x0:x1] = ... on x itself" if fn == "cutmix" else "x.mul_(lam).add_(...)")
            fail(f"{where}: the call changed {int(changed.sum())} of {x.numel()} values of x ({place}){same}: it wrote "
                 f"into the caller's batch in place, as timm's Mixup does ({how}). The caller may still need x (to "
                 "log it, to mix it again, for another view): build a new tensor (mixed = x.clone(), then paste into "
                 "mixed; or lam * x + (1 - lam) * x[perm])")
        if not torch.equal(y, y_before):
            fail(f"{where}: the call changed y from {y_before.tolist()} to {y.tolist()}; leave the labels as they were")
    mixes(ctx)


@CHECKS.add("soft-ce-matches-torch", "soft_target_cross_entropy: value and gradient equal F.cross_entropy with "
                                     "probability targets (the mean over rows)")
def soft_ce_matches(ctx):
    for where, logits, targets in soft.cases(ctx):
        soft.compare(ctx, where, logits, targets)


@CHECKS.add("soft-ce-large-logits", "soft_target_cross_entropy: finite and right for logits of 1e4 and targets "
                                    "with zeros")
def soft_ce_large_logits(ctx):
    reached = False  # whether any loss was computed from the logits
    for where, logits, targets in soft.cases(ctx, scale=soft.BIG, grid=soft.BIG_GRID):
        mine = soft.call(ctx, where, logits, targets)
        reached = reached or mine.grad is not None
        seen = soft.value_of(mine, where)
        if not math.isfinite(seen) or (mine.grad is not None and not torch.isfinite(mine.grad).all()):
            what = f"the loss is {seen}" if not math.isfinite(seen) else "some gradient entries are NaN/inf"
            fail(f"{where}: {what} (torch's loss is {fmt(soft.torch_run(logits, targets).value)}): softmax underflows "
                 "to exact 0 for logits 1e4 below the row's max, log(0) = -inf, and a target weight of 0 times -inf "
                 "is NaN; take F.log_softmax(logits, dim=-1), which stays finite")
        # The same targets with logits of ordinary size: a loss that is wrong there too has a wrong formula,
        # which the check "soft-ce-matches-torch" reports; only what large logits change is this check's business.
        small = logits / soft.BIG * 3
        if not soft.agrees(ctx, where, small, targets):
            continue
        try:
            soft.compare(ctx, where, logits, targets, mine)
        except CheckFailed as exc:
            if seen < soft.torch_run(logits, targets).value:
                raise CheckFailed(f"{exc} It is right for ordinary logits: an epsilon (log(softmax + eps), "
                                  "clamp(min=eps)) caps each -log p at -log(eps), where the true value is about 1e4; "
                                  "take F.log_softmax instead") from None
            raise
    if not reached:  # a loss that never touched the logits is finite for no merit
        nothing_to_check("no returned loss was computed from the logits (no gradient reached them)")


@CHECKS.add("validation", "ValueError for lam outside [0, 1] or NaN, and for a perm that is not a permutation "
                          "of range(N)")
def validation(ctx):
    x, y = mx.images(ctx, 4, 1, 4, 4, seed=9), mx.labels(ctx, 4, NUM_CLASSES, seed=9)
    for fn in ("mixup", "cutmix"):
        extra = {"center": (2, 2)} if fn == "cutmix" else {}
        cases = [(lam, P4, f"lam={lam}") for lam in BAD_LAMS]
        cases += [(0.5, perm, f"perm={perm}, which {why}") for perm, why in BAD_PERMS]
        for lam, perm, what in cases:
            try:
                getattr(ctx.solution, fn)(x.clone(), y.clone(), num_classes=NUM_CLASSES, lam=lam,
                                          perm=mx.as_perm(ctx, perm), **extra)
            except ValueError:
                continue
            except (CheckSkipped, ForeignSkip):
                raise
            except Exception as exc:  # noqa: BLE001 - the wrong exception is the finding
                fail(f"{fn}({what}): expected ValueError, got {type(exc).__name__}: {str(exc)[:200]}; check the "
                     "arguments first, before any indexing, and raise ValueError")
            hint = ""
            if isinstance(lam, float) and math.isnan(lam):
                hint = ("; NaN fails every comparison, so a test written as `lam < 0 or lam > 1` lets it through: "
                        "write `not 0 <= lam <= 1`")
            elif perm != P4 and len(perm) == 4:
                hint = ("; a check of len(perm) alone misses it: compare perm.sort().values with torch.arange(N)")
            fail(f"{fn}({what}): expected ValueError, but it returned a result{hint}")
