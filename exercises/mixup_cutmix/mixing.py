"""What the mixup_cutmix checks share: inputs, calls into the solution, and reading its answer back:
which sample each row's pixels and second label came from, and which weight its target gives each label."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from quizapp.checking.harness import CheckSkipped, ForeignSkip, Tol, close_elements, fail, fmt, is_close, scale_of

PIXEL_RTOL = 1e-5  # of the largest |x|: another op order (lerp, float64 and back) moves values by ~1e-7
WEIGHT_ATOL = 1e-6  # a target weight of a float32 run: lam itself is exact to 6e-8 in float32
WEIGHT_TOL = Tol(atol=WEIGHT_ATOL)


def pixel_tol(x) -> Tol:
    """PIXEL_RTOL of x's largest |value| (harness.scale_of), for every pixel alike: each pixel of a
    right answer is a blend of x's own, so x's scale is the one its rounding follows."""
    return Tol(atol=PIXEL_RTOL * scale_of(x))


# -- inputs -----------------------------------------------------------------------------------

def images(ctx, n, channels, height, width, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, channels, height, width, generator=g).to(ctx.device, dtype)


def labels(ctx, n, num_classes, seed, distinct=True):
    """Distinct labels (so a row's second label names the sample it came from), or repeated ones."""
    g = torch.Generator().manual_seed(seed)
    if distinct:
        return torch.randperm(num_classes, generator=g)[:n].to(ctx.device)
    return torch.randint(0, num_classes, (n,), generator=g).to(ctx.device)


def as_perm(ctx, values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.long, device=ctx.device)


def dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


# -- calling the solution ---------------------------------------------------------------------

@dataclass
class Mixed:
    where: str
    x: torch.Tensor        # the input as it was before the call (the solution got a copy)
    y: torch.Tensor
    perm: torch.Tensor
    lam: float
    num_classes: int
    center: tuple | None
    mixed: torch.Tensor    # what the solution returned
    targets: torch.Tensor

    @property
    def n(self) -> int:
        return self.x.shape[0]


def describe(fn, x, lam, perm, num_classes, center=None) -> str:
    shape = "x (" + ", ".join(str(s) for s in x.shape) + ")"
    kind = f" {dtype_name(x.dtype)}" if x.dtype != torch.float32 else ""
    at = f", center={tuple(center)}" if center is not None else ""
    return f"{fn}({shape}{kind}, lam={lam}{at}, perm={perm.tolist()}, num_classes={num_classes})"


def call(ctx, fn, x, y, lam, perm, num_classes, center=None) -> Mixed:
    """Call mixup or cutmix on copies of the inputs; the originals stay for the comparison."""
    where = describe(fn, x, lam, perm, num_classes, center)
    kwargs = {"num_classes": num_classes, "lam": lam, "perm": perm.clone()}
    if center is not None:
        kwargs["center"] = center
    with ctx.given(where):
        out = getattr(ctx.solution, fn)(x.clone(), y.clone(), **kwargs)
    mixed, targets = unpack(out, where)
    if mixed.shape != x.shape:
        fail(f"{where}: mixed_x has shape {tuple(mixed.shape)}, expected x's {tuple(x.shape)}")
    return Mixed(where, x, y, perm, lam, num_classes, center, mixed.detach(), targets.detach())


def unpack(out, where):
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        got = f"a {type(out).__name__} of length {len(out)}" if isinstance(out, (tuple, list)) else type(out).__name__
        fail(f"{where}: expected a pair (mixed_x, targets), got {got}")
    for name, value in zip(("mixed_x", "targets"), out):
        if not isinstance(value, torch.Tensor):
            fail(f"{where}: expected {name} to be a tensor, got {type(value).__name__}")
    return out


def weights(run: Mixed) -> torch.Tensor:
    """The targets as float64 (N, num_classes) on the CPU. Fewer columns than classes (F.one_hot without
    num_classes) are padded with zeros here: the shape is the business of the check on shapes and dtypes."""
    t = run.targets
    n, k = run.n, run.num_classes
    if t.dim() != 2 or t.shape[0] != n or t.shape[1] > k or int(run.y.max()) >= t.shape[1]:
        fail(f"{run.where}: expected targets of shape ({n}, {k}) (one row per sample, one column per class), got "
             f"{tuple(t.shape)}")
    t = t.detach().double().cpu()
    if t.shape[1] < k:
        t = torch.cat([t, t.new_zeros(n, k - t.shape[1])], dim=1)
    return t


# -- the contract's answers -------------------------------------------------------------------

def onehot(y, num_classes) -> torch.Tensor:
    return torch.nn.functional.one_hot(y.cpu(), num_classes).double()


def mixed_rows(y, partner_classes, own_weight, num_classes) -> torch.Tensor:
    """Row i: own_weight on y[i] and the rest on partner_classes[i]."""
    partner = torch.as_tensor(partner_classes, dtype=torch.long)
    w = torch.as_tensor(own_weight, dtype=torch.float64).reshape(-1, 1)
    return w * onehot(y, num_classes) + (1 - w) * onehot(partner, num_classes)


# -- reading the solution's answer ------------------------------------------------------------

def same_pixels(a, b, tol: Tol) -> torch.Tensor:
    """(H, W): where every channel of a equals b's, within tol (see pixel_tol)."""
    return close_elements(a, b, tol).all(dim=0)


def pasted(run: Mixed, i: int) -> torch.Tensor:
    """(H, W): the pixels of row i that are not x[i]'s."""
    return ~same_pixels(run.mixed[i].cpu(), run.x[i].cpu(), pixel_tol(run.x))


def box_source(run: Mixed, i: int) -> int | None:
    """The one sample whose pixels fill every pasted pixel of row i, or None (none pasted, or no single one)."""
    region = pasted(run, i)
    if not region.any():
        return None
    tol, got = pixel_tol(run.x), run.mixed[i].cpu()
    for k in range(run.n):
        if k != i and same_pixels(got, run.x[k].cpu(), tol)[region].all():
            return k
    return None


def blend_source(run: Mixed, i: int) -> int | None:
    """The sample k with mixed[i] = lam * x[i] + (1 - lam) * x[k], or None."""
    if run.lam == 1.0:
        return None
    x, tol = run.x.double().cpu(), pixel_tol(run.x)
    rest = run.mixed[i].double().cpu() - run.lam * x[i]
    for k in range(run.n):
        if k != i and is_close(rest, (1 - run.lam) * x[k], tol):
            return k
    return None


def label_source(run: Mixed, t: torch.Tensor, i: int) -> int | None:
    """With distinct labels: the sample whose label is row i's one other class with weight, or None. A
    smoothing floor is no label: which partner a row names is judged above it."""
    floor = smoothing_floor(t) or 0.0
    others = [c for c in range(t.shape[1]) if c != int(run.y[i]) and t[i, c] > floor + WEIGHT_ATOL]
    if len(others) != 1:
        return None
    holders = (run.y.cpu() == others[0]).nonzero().flatten().tolist()
    return holders[0] if len(holders) == 1 else None


def smoothing_floor(t: torch.Tensor) -> float | None:
    """The value every class but a row's two heaviest holds, when it is one small positive value in every
    row: label smoothing folded into the targets (smoothing / num_classes, timm's Mixup with
    label_smoothing > 0). None when there is no such floor, or too few classes to show one."""
    k = t.shape[1]
    if k < 3:
        return None
    rest = t.sort(dim=1, descending=True).values[:, 2:]
    floor = float(rest.min())
    if floor <= WEIGHT_ATOL or floor * k >= 1 - WEIGHT_ATOL or float(rest.max()) - floor > WEIGHT_ATOL:
        return None
    return floor


def unsmooth(t: torch.Tensor, floor: float) -> torch.Tensor:
    """The targets before smoothing s = floor * k was folded in: t = (1 - s) * mixed + s / k."""
    return (t - floor) / (1 - floor * t.shape[1])


NO_SMOOTHING = ("The contract's targets carry no smoothing: lam * onehot(y) + (1 - lam) * onehot(y[perm]) with zeros "
                "elsewhere (smoothing, if wanted, belongs to the loss)")


def smoothing_name(floor: float, k: int) -> str:
    s = floor * k
    timm = ", as timm's Mixup makes them with its default label_smoothing=0.1" if is_close(s, 0.1, WEIGHT_TOL) else ""
    return f"label smoothing of {fmt(s)}, smoothing / num_classes = {fmt(s)} / {k} = {fmt(floor)} on every class{timm}"


def smoothing_text(floor: float, k: int) -> str:
    return (f"every class other than a row's labels holds {fmt(floor)}: the targets carry "
            f"{smoothing_name(floor, k)}. {NO_SMOOTHING}")


def row_text(row: torch.Tensor, floor: float | None) -> str:
    """A target row's weights; with a smoothing floor, the weights above it and the floor once."""
    if floor is None:
        return nonzero_entries(row)
    return f"{nonzero_entries(torch.where(close_elements(row, floor, WEIGHT_TOL), 0.0, row))} and {fmt(floor)} on each other class"


def folded_lam(ctx, run: Mixed, right) -> bool:
    """Whether mixup is right at 1 - lam on the same inputs, where lam < 0.5 gave the weights of 1 - lam:
    lam folded to max(lam, 1 - lam) (fastai's MixUp), not weights swapped at every lam. `right(other)`
    judges the run at 1 - lam."""
    if not run.lam < 0.5:
        return False
    try:
        other = call(ctx, "mixup", run.x, run.y, 1.0 - run.lam, run.perm, run.num_classes)
        return bool(right(other))
    except (CheckSkipped, ForeignSkip):
        raise
    except Exception:  # noqa: BLE001 - the run at 1 - lam only names a cause; its errors are another case's
        return False


def fold_text(lam: float) -> str:
    return (f"lam was folded to max(lam, 1 - lam) = {fmt(max(lam, 1 - lam))}: the contract uses the drawn lam as is, "
            f"here {fmt(lam)}, so the sample's own image and label get the smaller weight when lam < 0.5 (fastai's "
            "MixUp folds lam so that the first image always dominates; here the caller draws lam and means it)")


def partner_classes(run: Mixed, t: torch.Tensor) -> list[int]:
    """Row i's second class as the solution wrote it (its heaviest class other than y[i]): the weights are
    judged against the partner it chose (which partner is right is another check's business). A row with
    no second class pairs the sample with its own label when other rows do have one (a pairing with a fixed
    point); when no row has one, the labels were not mixed at all, and y[perm[i]] is the partner's class."""
    y, perm = run.y.cpu(), run.perm.cpu()
    found = []
    for i in range(run.n):
        row = t[i].clone()
        row[int(y[i])] = -1.0
        c = int(row.argmax())
        found.append(c if row[c] > WEIGHT_ATOL else None)
    mixes = any(c is not None for c in found)
    return [c if c is not None else int(y[i] if mixes else y[perm[i]]) for i, c in enumerate(found)]


def nonzero_entries(row: torch.Tensor, limit: int = 4) -> str:
    items = [(c, float(row[c])) for c in range(len(row)) if abs(float(row[c])) > WEIGHT_ATOL]
    shown = ", ".join(f"class {c}: {fmt(v)}" for c, v in items[:limit])
    return "{" + shown + (f", and {len(items) - limit} more" if len(items) > limit else "") + "}"


def name_permutation(found: list, perm: list) -> str:
    """What the rows paired otherwise than perm (found: a sample per row, None where unknown) match, in words."""
    n = len(perm)
    inverse = sorted(range(n), key=lambda i: perm[i])
    wrong = [(i, f) for i, f in enumerate(found) if f is not None and f != perm[i]]
    if wrong and all(inverse[i] == f for i, f in wrong):
        return ("argsort(perm)[i], the inverse permutation: writing through perm (out[perm] = ..., index_copy_, "
                "scatter_) sends sample i to row perm[i] instead of reading row i's partner from perm[i]")
    if wrong and all(n - 1 - i == f for i, f in wrong):
        return "N - 1 - i, i.e. .flip(0), as timm pairs samples; here the partner is given: index with perm"
    if wrong and all(perm[perm[i]] == f for i, f in wrong):
        i, f = wrong[0]
        return (f"perm[perm[i]] where it differs: when row {i} read its partner {perm[i]}, that row's box already held "
                f"sample {f}'s pixels, pasted earlier in the same loop; read the partners from an unmodified x "
                "(x[perm] is a copy), not from the batch being written")
    return "a pairing of its own, neither perm nor its inverse (a second torch.randperm, or a shifted copy?)"
