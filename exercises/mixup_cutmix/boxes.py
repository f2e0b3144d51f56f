"""CutMix's box for the mixup_cutmix checks: where the contract puts it, where the usual mistakes put it,
what the solution's box looks like (in words and as a small picture), and which mistaken label weight
a wrong weight matches."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from quizapp.checking.harness import fmt, is_close, sibling_module

mx = sibling_module(__file__, "mixing")


# -- the contract's box -----------------------------------------------------------------------

@dataclass(frozen=True)
class Box:
    y0: int
    y1: int
    x0: int
    x1: int

    @property
    def area(self) -> int:
        return max(self.y1 - self.y0, 0) * max(self.x1 - self.x0, 0)

    def text(self) -> str:
        return f"[{self.y0}:{self.y1}, {self.x0}:{self.x1}]"


def sides(height, width, lam) -> tuple[int, int]:
    r = math.sqrt(1.0 - lam)
    return int(height * r), int(width * r)


def clip(v, hi) -> int:
    return min(max(v, 0), hi)


def contract_box(height, width, lam, center, h=None, w=None) -> Box:
    """The box as timm's rand_bbox cuts it: half sizes with //, each end clipped to the image."""
    if h is None:
        h, w = sides(height, width, lam)
    cy, cx = center
    return Box(clip(cy - h // 2, height), clip(cy + h // 2, height), clip(cx - w // 2, width), clip(cx + w // 2, width))


def box_mask(height, width, rows: slice, cols: slice) -> torch.Tensor:
    """The pixels `x[..., rows, cols]` selects, Python's slicing rules included (a negative start
    counts from the end)."""
    m = torch.zeros(height, width, dtype=torch.bool)
    m[rows, cols] = True
    return m


def mask_of(box: Box, height, width) -> torch.Tensor:
    return box_mask(height, width, slice(box.y0, box.y1), slice(box.x0, box.x1))


def kept_share(box: Box, height, width) -> float:
    return 1.0 - box.area / (height * width)


# -- the usual mistakes ------------------------------------------------------------------------

def box_variants(height, width, lam, center) -> dict:
    """Boxes of the usual mistakes, by what went wrong."""
    cy, cx = center
    h, w = sides(height, width, lam)
    r = math.sqrt(1 - lam)
    ends = f"cy - h // 2 = {cy - h // 2}, cx - w // 2 = {cx - w // 2}"
    return {
        f"the box was not clipped ({ends}): a negative slice start counts from the end of the axis, so "
        f"x[..., {cy - h // 2}:{cy + h // 2}, {cx - w // 2}:{cx + w // 2}] selects other pixels or none; clip each end "
        "to [0, H] or [0, W] first":
            box_mask(height, width, slice(cy - h // 2, cy + h // 2), slice(cx - w // 2, cx + w // 2)),
        f"the centre is read the wrong way round: center is (cy, cx), here ({cy}, {cx}), row first":
            mask_of(contract_box(height, width, lam, (cx, cy)), height, width),
        f"the sides are swapped: h = int(H * sqrt(1 - lam)) = {h} rows and w = int(W * sqrt(1 - lam)) = {w} columns":
            mask_of(contract_box(height, width, lam, center, h=w, w=h), height, width),
        f"the box runs from cy - h // 2 to cy - h // 2 + h: with an odd h = {h} the contract's box (timm's "
        "rand_bbox) ends at cy + h // 2, one row shorter":
            mask_of(Box(clip(cy - h // 2, height), clip(cy - h // 2 + h, height),
                              clip(cx - w // 2, width), clip(cx - w // 2 + w, width)), height, width),
        "the sides are rounded: h = int(H * sqrt(1 - lam)) truncates":
            mask_of(contract_box(height, width, lam, center, h=round(height * r), w=round(width * r)),
                       height, width),
        "the sides are H * (1 - lam): the box's area is (1 - lam) of the image, so each side is "
        "H * sqrt(1 - lam)":
            mask_of(contract_box(height, width, lam, center, h=int(height * (1 - lam)), w=int(width * (1 - lam))),
                       height, width),
        "the sides are H * sqrt(lam): the box is the part replaced, (1 - lam) of the image":
            mask_of(contract_box(height, width, lam, center, h=int(height * math.sqrt(lam)),
                                       w=int(width * math.sqrt(lam))), height, width),
    }


def extent(region) -> str:
    if not region.any():
        return "no pixel"
    rows, cols = region.any(dim=1).nonzero().flatten(), region.any(dim=0).nonzero().flatten()
    y0, y1, x0, x1 = int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1
    shape = "" if int(region.sum()) == (y1 - y0) * (x1 - x0) else ", not a filled rectangle"
    return f"{int(region.sum())} pixels in [{y0}:{y1}, {x0}:{x1}]{shape}"


def box_problem(run, i, box, height, width) -> str:
    """Why row i's pixels are not the contract's box, in words, with a picture of small images."""
    perm, tol = run.perm.cpu().tolist(), mx.pixel_tol(run.x)
    want = mask_of(box, height, width)
    got_row, x = run.mixed[i].cpu(), run.x.cpu()
    kept = mx.same_pixels(got_row, x[i], tol)
    partner = mx.same_pixels(got_row, x[perm[i]], tol) & ~kept
    unknown = ~kept & ~partner
    sources = [mx.box_source(run, r) for r in range(run.n)]
    why = ""
    if sources[i] is not None and sources[i] != perm[i]:
        why = (f" Its box holds pixels of sample {sources[i]}, not of perm[{i}] = {perm[i]}. The samples your boxes "
               f"came from, row by row: {sources} (perm: {perm}); that is {mx.name_permutation(sources, perm)}.")
    elif bool((partner == ~want).all()) and want.any() and not unknown.any():
        why = (" x and x[perm] swapped roles: the box must come from x[perm] and the rest stay x (the sample keeps "
               "1 - box share of its own pixels).")
    elif not unknown.any():
        for reason, mask in box_variants(height, width, run.lam, run.center).items():
            if torch.equal(partner, mask) and not torch.equal(mask, want):
                why = f" Your box matches one where {reason}."
                break
    if unknown.any() and not why:
        why = (f" {int(unknown.sum())} pixels are neither x[{i}]'s nor x[perm[{i}]]'s: inside the box copy the "
               "partner's pixels as they are, outside keep x's.")
    text = (f"{run.where}: sample {i} should take the box {box.text()} ({box.area} pixels) from x[perm[{i}]] = "
            f"x[{perm[i]}] and keep every other pixel of x[{i}]; yours takes {extent(partner)} from x[{perm[i]}].{why}")
    if height <= 16 and width <= 16:
        text += (f"\nSample {i}'s pixels (B: from x[perm[{i}]] as they should be, .: kept as they should be, -: in the "
                 f"box but kept, +: outside the box but pasted, ?: neither x[{i}]'s nor x[perm[{i}]]'s):\n"
                 + picture(want, partner, unknown))
    return text


def weight_candidates(run, box, height, width) -> list:
    """(weight, why) of the usual mistakes for this case."""
    h, w = sides(height, width, run.lam)
    unclipped = (2 * (h // 2)) * (2 * (w // 2))
    return [
        (run.lam, "drawn", f"the drawn lam = {fmt(run.lam)}: once the box is clipped it covers less, so recompute "
                           "the weight from the clipped box, 1 - (y1 - y0) * (x1 - x0) / (H * W), as timm's "
                           "correct_lam does"),
        (1 - h * w / (height * width), "h*w",
         f"1 - h * w / (H * W) = 1 - {h} * {w} / {height * width}, from the sides before clipping (and before h // 2 "
         "trimmed an odd side): take the area from the clipped y0, y1, x0, x1"),
        (1 - unclipped / (height * width), "ends",
         f"1 - {unclipped} / {height * width}, the area of the box [cy - h // 2 : cy + h // 2, cx - w // 2 : "
         "cx + w // 2] before clipping: clip the ends first, then take the area"),
        (box.area / (height * width), "share",
         f"the box's share, {box.area} / {height * width}: the sample's own label gets the share of pixels it keeps, "
         "1 - box area / (H * W); the box's share goes to the partner's label"),
    ]


def weight_hint(failures) -> str:
    """The mistake every failing row's weight matches, when there is one."""
    first = failures[0]
    for k, (_, _, why) in enumerate(weight_candidates(*first[1])):
        if all(is_close(own, weight_candidates(*args)[k][0], mx.WEIGHT_TOL) for _, args, own in failures):
            return f" That is {why}."
    return ""


# -- pictures ----------------------------------------------------------------------------------

def picture(expected: torch.Tensor, partner: torch.Tensor, unknown: torch.Tensor) -> str:
    """One small map of a sample's pixels, narrow enough for a table's message column."""
    marks = {(True, True): "B", (False, False): ".", (True, False): "-", (False, True): "+"}
    return "\n".join("  " + "".join("?" if unknown[r, c] else marks[(bool(expected[r, c]), bool(partner[r, c]))]
                                     for c in range(expected.shape[1]))
                      for r in range(expected.shape[0]))
