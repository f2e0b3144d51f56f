"""Child side: the one way checks compare a result with what they expected.

Every check that asks "is the learner's number, or tensor, close enough" asks it here, so that one
rule holds everywhere: a NaN is never close to a number, nor to a NaN unless the check says NaN is
the right answer there; an infinity is close only to the same infinity; -0.0 equals 0.0; and a
failure says how many elements are off, where the worst one is, both values there and the tolerance
it missed. A comparison written by hand as `err > tol` lets NaN through (every comparison with NaN is
False): that is why there is one.

This module knows nothing of checks or solutions; harness.py builds `check_close` and `same_outputs`
on it and re-exports its names, which checks import from there.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Tol:
    """How close is close: |yours - expected| <= atol + rtol * |expected|, element by element.

    With `of_largest`, rtol is taken of the expected's largest finite |value| instead, one bound for
    the whole tensor: for values that share one scale (a layer's output, a gradient, a set of weights),
    where an element that happens to sit near zero must not need digits of its own. An expected that
    is all zero has scale 1 then, so that rtol still bounds the difference."""

    rtol: float = 0.0
    atol: float = 0.0
    of_largest: bool = False

    def __post_init__(self):
        if not (self.rtol >= 0 and self.atol >= 0):  # NaN fails too: a NaN bound would pass everything
            raise ValueError(f"tolerances must be >= 0, got rtol={self.rtol}, atol={self.atol}")


# -- the tolerances by dtype -----------------------------------------------------------------
# For a result that another correct solution may compute in another order of the same operations.
# A check whose own measurements call for another bound passes a Tol of its own, with the reason.

EXACT = Tol()
# Another order of the same float32 operations (a sum split differently, x (B A)^T for (x A^T) B^T, a
# fused kernel) moves a result by about 1e-7 of its size: 1e-5 leaves a hundredfold margin, and a
# wrong factor, term or mask moves a result by 1e-3 of it or more. The atol is for expected values
# at or near zero, whose relative bound would otherwise vanish.
FLOAT32 = Tol(rtol=1e-5, atol=1e-6)
# Thousands of float64 eps, yet 1e5 below float32's rounding: a float64 result computed in float32
# by mistake is caught.
FLOAT64 = Tol(rtol=1e-12)
# 4 eps of each half type: correct implementations were measured within 2 eps of torch's own result
# (label_smoothing's measurements over 1500 seeds and seven implementations).
FLOAT16 = Tol(rtol=4 * torch.finfo(torch.float16).eps)  # 3.9e-3
BFLOAT16 = Tol(rtol=4 * torch.finfo(torch.bfloat16).eps)  # 3.1e-2

_BY_DTYPE = {torch.float64: FLOAT64, torch.float32: FLOAT32, torch.float16: FLOAT16, torch.bfloat16: BFLOAT16}


def tolerance_for(dtype: torch.dtype) -> Tol:
    """The named tolerance of a float dtype; integers and bools compare exactly."""
    return _BY_DTYPE.get(dtype, EXACT)


def _dtype_of(value) -> torch.dtype:
    return value.dtype if isinstance(value, torch.Tensor) else torch.float64


# -- reading values --------------------------------------------------------------------------

def _values(value) -> torch.Tensor | None:
    """`value` as a detached float64 CPU tensor (a Python number as a 0-dim one), or None when it is
    neither a real tensor nor a number. A tensor subclass is read as the plain tensor it holds, so
    that no override of its own answers the comparison."""
    if isinstance(value, torch.Tensor):
        if type(value) is not torch.Tensor and type(value) is not torch.nn.Parameter:
            with torch._C.DisableTorchFunctionSubclass():
                value = torch.Tensor.as_subclass(value, torch.Tensor)
        if value.is_complex():
            return None
        try:
            return value.detach().to(device="cpu", dtype=torch.float64)
        except (RuntimeError, TypeError, NotImplementedError):  # sparse, meta: no values to read
            return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return torch.tensor(float(value), dtype=torch.float64)
    return None


def _kind(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"a {str(value.dtype).replace('torch.', '')} tensor the grader cannot read"
    return f"a {type(value).__name__}"


def scale_of(expected) -> float:
    """The expected's largest finite |value|, or 1 when there is none or it is 0: what an of_largest
    Tol's rtol is a fraction of, and what `largest_error` divides by."""
    e = _values(expected)
    if e is None:
        raise TypeError(f"scale_of reads a tensor or a number, not {_kind(expected)}")
    sizes = e.abs()[e.isfinite()]
    return (float(sizes.max()) if sizes.numel() else 0.0) or 1.0


def _agree(a: torch.Tensor, e: torch.Tensor, tol: Tol, equal_nan: bool) -> tuple[torch.Tensor, torch.Tensor, float]:
    """(which elements are close, the bound at each element, the scale of_largest used)."""
    finite = a.isfinite() & e.isfinite()
    scale = 1.0
    if tol.of_largest:
        scale = scale_of(e)
        bound = torch.full_like(e, tol.atol + tol.rtol * scale)
    else:
        bound = tol.atol + tol.rtol * e.abs()
    # (a - e) of two infinities of one sign is NaN: the non-finite pairs are judged apart, by
    # equality (an infinity equals only itself) and, where asked, NaN against NaN.
    close_finite = (a - e).abs() <= bound
    same_special = (a == e) | (a.isnan() & e.isnan() & equal_nan)
    return torch.where(finite, close_finite, same_special), bound, scale


@dataclass
class _Verdict:
    problem: str | None = None  # shape, dtype, or not a tensor: nothing element-wise to say
    tol: Tol = EXACT
    ok: torch.Tensor | None = None
    bound: torch.Tensor | None = None
    scale: float = 1.0
    a: torch.Tensor | None = None
    e: torch.Tensor | None = None


def _judge(actual, expected, tol, equal_nan, exact_dtype, what) -> _Verdict:
    e = _values(expected)
    if e is None:
        raise TypeError(f"the expected value must be a real tensor or a number, not {_kind(expected)}")
    a = _values(actual)
    if a is None:
        want = f"a tensor of shape {tuple(e.shape)}" if isinstance(expected, torch.Tensor) else "a number"
        return _Verdict(problem=f"expected {want}, got {_kind(actual)}")
    if a.shape != e.shape:
        return _Verdict(problem=f"{what} of shape {tuple(a.shape)}; expected shape {tuple(e.shape)}")
    if exact_dtype and _dtype_of(actual) != _dtype_of(expected):
        name = lambda v: str(_dtype_of(v)).replace("torch.", "")  # noqa: E731
        return _Verdict(problem=f"{what} of dtype {name(actual)}; expected dtype {name(expected)}")
    if tol is None:
        tol = tolerance_for(_dtype_of(expected))
    ok, bound, scale = _agree(a, e, tol, equal_nan)
    return _Verdict(tol=tol, ok=ok, bound=bound, scale=scale, a=a, e=e)


# -- the comparisons -------------------------------------------------------------------------

def mismatch(actual, expected, tol: Tol | None = None, *, what: str = "values", against: str | None = None,
             yours: str = "yours", equal_nan: bool = False, exact_dtype: bool = False) -> str | None:
    """None when `actual` is close to `expected` within `tol` (by default the named tolerance of the
    expected's dtype), else what differs, in one message: a shape (or, with `exact_dtype`, a dtype)
    that is not the expected's; or how many of the `what` differ, the worst element's index, both
    values there, by how much and the tolerance there, and how many are NaN or infinite.

    `against` names the expected side as the message shows it beside a value ("the reference",
    "base(x)", "rank 0's"); `yours` the actual side ("yours", "rank 1's"). NaN against NaN is a
    mismatch unless `equal_nan`: a check passes it only where NaN is the right answer. Python numbers
    compare as 0-dim tensors; both sides are compared in float64, on the CPU."""
    theirs = "expected" if against is None else against
    verdict = _judge(actual, expected, tol, equal_nan, exact_dtype, what)
    if verdict.problem is not None:
        return verdict.problem
    ok = verdict.ok
    if bool(ok.all()):
        return None
    a, e, bound, tol = verdict.a, verdict.e, verdict.bound, verdict.tol
    bad = ~ok
    flat = _worst(a, e, bound, bad)
    index = _index(flat, a.shape)
    av, ev, limit = float(a.flatten()[flat]), float(e.flatten()[flat]), float(bound.flatten()[flat])
    if _finite(av) and _finite(ev):
        detail = f"off by {abs(av - ev):.3g}, tolerance {limit:.3g}"
        if tol.of_largest and tol.rtol:
            detail += f" = {tol.rtol:.2g} x the largest |value| {verdict.scale:.4g}"
    else:
        if av != av or ev != ev:
            detail = "NaN is close to nothing, not even to NaN" if av != av and ev != ev else "NaN is close to nothing"
        else:
            detail = "an infinity is close only to the same infinity"
        if _finite(limit):  # an expected NaN or infinity has no finite bound of its own to show
            detail += f"; tolerance {limit:.3g}"
    shown = _digits(av, ev)
    worst = f"{yours} {_num(av, shown)}, {theirs} {_num(ev, shown)} ({detail})"
    if a.numel() == 1:
        return worst
    where = f" at [{', '.join(map(str, index))}]"
    text = (f"{int(bad.sum())} of {a.numel()} {what} differ from "
            f"{'the expected' if against is None else theirs}; the worst{where}: {worst}")
    return text + _specials(a, e, bad, yours, "the expected values" if against is None else theirs)


def is_close(actual, expected, tol: Tol | None = None, *, equal_nan: bool = False,
             exact_dtype: bool = False) -> bool:
    """Whether `mismatch` would find nothing: for a check that only decides (which mistake a wrong
    answer matches), not one that reports."""
    verdict = _judge(actual, expected, tol, equal_nan, exact_dtype, "values")
    return verdict.problem is None and bool(verdict.ok.all())


def close_elements(actual, expected, tol: Tol | None = None, *, equal_nan: bool = False) -> torch.Tensor:
    """Element by element, which of `actual` are close to `expected` (broadcast together), by the same
    rule as `mismatch`: a bool tensor on the CPU, for checks that ask where a result is right (which
    pixels came from which image, which entries to leave out of a comparison)."""
    a, e = _values(actual), _values(expected)
    if a is None or e is None:
        raise TypeError(f"close_elements compares tensors or numbers, not {_kind(actual if a is None else expected)}")
    a, e = torch.broadcast_tensors(a, e)
    return _agree(a, e, tol if tol is not None else tolerance_for(_dtype_of(expected)), equal_nan)[0]


def largest_error(actual, expected) -> float:
    """The largest |yours - expected|, as a fraction of the expected's largest finite |value| (1 when
    that is 0): the number an of_largest Tol bounds, for messages that report it. A NaN or infinity
    that the other side does not have at that place, or a shape that differs, is an infinite error."""
    a, e = _values(actual), _values(expected)
    if a is None or e is None or a.shape != e.shape:
        return float("inf")
    if not a.numel():
        return 0.0
    finite = a.isfinite() & e.isfinite()
    if bool((~finite & (a != e)).any()):
        return float("inf")
    diff = (a - e).abs()[finite]
    return float(diff.max()) / scale_of(e) if diff.numel() else 0.0


# -- the message's parts ---------------------------------------------------------------------

def _finite(x: float) -> bool:
    return x == x and x not in (float("inf"), float("-inf"))


def _num(x: float, digits: int = 6) -> str:
    return "NaN" if x != x else f"{x:.{digits}g}"


def _digits(a: float, b: float) -> int:
    """6 significant digits, or as many more as it takes for two different values not to read alike."""
    digits = 6
    while digits < 17 and a != b and _num(a, digits) == _num(b, digits):
        digits += 1
    return digits


def _worst(a: torch.Tensor, e: torch.Tensor, bound: torch.Tensor, bad: torch.Tensor) -> int:
    """The flat index of the worst mismatch: a NaN or an infinity first (the headline of such a
    failure), then the largest multiple of its tolerance, then the largest difference."""
    a, e, bound, bad = a.flatten(), e.flatten(), bound.flatten(), bad.flatten()
    special = bad & ~(a.isfinite() & e.isfinite())
    if bool(special.any()):
        return int(special.nonzero()[0])
    diff = (a - e).abs()
    ratio = torch.where(bound > 0, diff / bound, torch.inf)
    key = torch.where(bad, ratio, -torch.inf)
    top = key.max()
    candidates = (key == top) & bad
    return int(torch.where(candidates, diff, -torch.inf).argmax())


def _index(flat: int, shape) -> list[int]:
    index = []
    for size in reversed(shape):
        flat, i = divmod(flat, size)
        index.append(i)
    return index[::-1]


def _specials(a, e, bad, yours: str, theirs: str) -> str:
    """How many of the differing elements are NaN or infinite, on either side."""
    parts = []
    for count, kind in ((int((bad & a.isnan()).sum()), "NaN"), (int((bad & a.isinf()).sum()), "infinite")):
        if count:
            parts.append(f"{count} of {yours} {'is' if count == 1 else 'are'} {kind}")
    for count, kind in ((int((bad & e.isnan() & ~a.isnan()).sum()), "NaN"),
                        (int((bad & e.isinf() & a.isfinite()).sum()), "infinite")):
        if count:
            parts.append(f"{theirs} {'are' if theirs == 'the expected values' else 'is'} {kind} at {count} of them")
    return "".join(f"; {p}" for p in parts)
