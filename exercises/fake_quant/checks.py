"""Behavioural checks for fake_quant: compare the learner's output with torch's own
fake_quantize_per_tensor_affine / per_channel_affine at the pinned scale, probe ties, zeros, a tiny
amax, dtypes, the straight-through gradient, and that x is left as it was."""

from __future__ import annotations

import math

import torch

from quizapp.checking.harness import (
    EXACT,
    FLOAT32,
    Checks,
    Required,
    Tol,
    close_elements,
    fail,
    fmt,
    is_close,
    nothing_to_check,
)

PER_TENSOR = [(bits, shape) for bits in (2, 4, 8) for shape in ((64,), (8, 16), (4, 3, 5))]
PER_CHANNEL = [(bits, shape, axis) for bits in (2, 4, 8)
               for shape, axis in (((6, 5, 4), 0), ((6, 5, 4), 1), ((6, 5, 4), 2), ((16, 8), 1))]
# x / scale within this of a half-integer: torch's kernel multiplies by 1/scale, which may round
# such a tie the other way than x / scale does; ties have a check of their own with exact inputs.
TIE_WINDOW = 1e-4
BAD_BITS = (1, 17, 0)
# (dtype, bits, shape, axis, amax of the whole tensor): per channel, every channel's amax is at most that.
TINY = [(torch.float32, 8, (64,), None, 1e-6),
        (torch.float32, 8, (8, 16), None, 1e-8),
        (torch.float32, 8, (6, 5, 4), 1, 1e-6),
        (torch.float32, 4, (16, 8), 0, 1e-8),
        (torch.float64, 8, (64,), None, 1e-8),
        (torch.float64, 8, (6, 5, 4), 2, 1e-8)]

CHECKS = Checks(
    Required("fake_quantize", "(x, *, bits=8, axis=None) -> torch.Tensor",
             sample_args=(None,), sample_kwargs={"bits": 8, "axis": None}),
)


def sample(ctx, shape, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    # Channels of very different sizes, so a per-tensor scale would be visibly wrong per channel.
    x = torch.randn(*shape, generator=g) * torch.rand(*shape, generator=g).add(0.1) * 3
    return x.to(dtype).to(ctx.device)


def dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def describe(bits, axis, shape, dtype=torch.float32) -> str:
    where = "per tensor" if axis is None else f"per channel, axis={axis}"
    kind = "" if dtype == torch.float32 else f" {dtype_name(dtype)}"
    return f"bits={bits}, {where}, x of shape {tuple(shape)}{kind}"


def call(ctx, x, bits, axis):
    with ctx.given(describe(bits, axis, x.shape, x.dtype)):
        return ctx.solution.fake_quantize(x, bits=bits, axis=axis)


def quantizes(ctx) -> None:
    """Skip a check that any function leaving values alone passes (zeros stay zeros, the dtype is
    kept), when fake_quantize hands x's own values back: then nothing was quantized to judge."""

    def go():
        x = sample(ctx, (8, 16), seed=3)
        try:
            out = ctx.solution.fake_quantize(x.clone(), bits=4, axis=None)
        except Exception:  # noqa: BLE001 - an error is the cases' to report, with their inputs
            return False
        return isinstance(out, torch.Tensor) and out.shape == x.shape and torch.equal(out.detach().to(x.dtype), x)

    if ctx.cached("hands-x-back", go):
        nothing_to_check("fake_quantize(x, bits=4) returned x's own values: nothing was quantized")


def torch_fake_quant(x, bits, axis):
    """torch's own kernels at the pinned scale: amax / qmax, and 1 where amax is 0."""
    qmax = 2 ** (bits - 1) - 1
    if axis is None:
        amax = x.abs().max().item()
        return torch.fake_quantize_per_tensor_affine(x, amax / qmax if amax > 0 else 1.0, 0, -qmax, qmax)
    others = [d for d in range(x.dim()) if d != axis]
    amax = x.abs().amax(dim=others).float()
    scale = torch.where(amax > 0, amax / qmax, torch.ones_like(amax))
    zero = torch.zeros(len(scale), dtype=torch.int32, device=x.device)
    return torch.fake_quantize_per_channel_affine(x, scale, zero, axis, -qmax, qmax)


def amax_of(x, axis):
    """amax over the whole tensor, or per channel (keepdim, so it broadcasts against x)."""
    if axis is None:
        return x.abs().amax()
    return x.abs().amax(dim=[d for d in range(x.dim()) if d != axis], keepdim=True)


def pinned_scale(x, bits, axis):
    qmax = 2 ** (bits - 1) - 1
    amax = amax_of(x, axis)
    return torch.where(amax > 0, amax / qmax, torch.ones_like(amax))


def as_tensor(out, x, where):
    if not isinstance(out, torch.Tensor):
        fail(f"{where}: expected a tensor, got {type(out).__name__}")
    if out.shape != x.shape:
        fail(f"{where}: expected the shape of x {tuple(x.shape)}, got {tuple(out.shape)}")
    return out.detach()


def shares_storage(out, x) -> bool:
    """Whether the result is x itself, or a view of x's memory."""
    if out is x:
        return True
    try:
        return out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    except (RuntimeError, AttributeError):  # a tensor without storage (sparse, meta) is not x
        return False


def implied_step(values, max_levels) -> float | None:
    """The largest step s such that every value is an integer multiple of s (each value read as
    level * s with |level| <= max_levels), or None if there is none."""
    v = values.detach().double().flatten().cpu()
    v = v[v != 0]
    if not len(v):
        return None
    top = v.abs().max()
    levels = torch.arange(1, max_levels + 1, dtype=torch.float64)
    ratio = v[None, :] * levels[:, None] / top
    on_grid = close_elements(ratio, ratio.round(), Tol(atol=1e-3)).all(dim=1)
    if not on_grid.any():
        return None
    return float(top / levels[on_grid.nonzero()[0, 0]])


def expect_equal(where, x, out, expected, bits, axis):
    """Equal to torch's result everywhere except at near-ties (see TIE_WINDOW)."""
    out = as_tensor(out, x, where).to(expected.dtype)
    scale = pinned_scale(x, bits, axis)
    level = x / scale
    near_tie = (((level - level.floor()) - 0.5).abs() < TIE_WINDOW).cpu()
    # Torch's kernel and x / scale round alike but for the last bit of the step: 1e-7 of the largest step.
    wrong = ~close_elements(out, expected, Tol(rtol=1e-6, atol=1e-7 * float(scale.max()))) & ~near_tie
    if wrong.any():
        i = tuple(int(v) for v in wrong.nonzero()[0])
        step = float(scale.expand_as(x)[i])
        fail(f"{where}: {int(wrong.sum())} of {x.numel()} values differ from torch's fake_quantize "
             f"(scale = amax / {2 ** (bits - 1) - 1}); at index {i}: x = {float(x[i]):.6g}, x / scale = "
             f"{float(level[i]):.4g}, expected {float(expected[i]):.6g}, got {float(out[i]):.6g} "
             f"(quantization step {step:.4g}){hint(x, out, bits, axis)}")


def hint(x, out, bits, axis) -> str:
    """Name the usual mistake the output matches, if one does."""
    qmax = 2 ** (bits - 1) - 1
    candidates = {"the levels run to 2**bits - 1 (unsigned); symmetric signed uses qmax = 2**(bits-1) - 1":
                  (x.abs().amax(), 2 ** bits - 1, None)}
    if axis is not None:
        candidates["one scale for the whole tensor; per channel, amax is taken over every dimension except axis"] = (
            x.abs().amax(), qmax, None)
        candidates[f"amax is taken over dimension {axis}; it must be over every dimension *except* axis"] = (
            x.abs().amax(dim=axis, keepdim=True), qmax, None)
    for why, (amax, q, _) in candidates.items():
        guess = torch.clamp(torch.round(x / (amax / q)), -q, q) * (amax / q)
        if is_close(out.to(guess.dtype), guess, FLOAT32):
            return f". Your output matches one where {why}"
    return ""


@CHECKS.add("per-tensor-matches-torch", "Per tensor: equals torch.fake_quantize_per_tensor_affine (bits 2, 4, 8)")
def per_tensor(ctx):
    for i, (bits, shape) in enumerate(PER_TENSOR):
        x = sample(ctx, shape, seed=10 + i)
        # The solution gets a copy: writing into x is the business of the check "x-unchanged".
        out = call(ctx, x.clone(), bits, None)
        expect_equal(describe(bits, None, shape), x, out, torch_fake_quant(x, bits, None), bits, None)


@CHECKS.add("per-channel-matches-torch", "Per channel: equals torch.fake_quantize_per_channel_affine on axes 0, 1, 2")
def per_channel(ctx):
    for i, (bits, shape, axis) in enumerate(PER_CHANNEL):
        x = sample(ctx, shape, seed=50 + i)
        out = call(ctx, x.clone(), bits, axis)
        expect_equal(describe(bits, axis, shape), x, out, torch_fake_quant(x, bits, axis), bits, axis)


@CHECKS.add("round-half-even", "Ties round half to even (x / scale = 0.5 -> 0, 1.5 -> 2, 2.5 -> 2)")
def round_half_even(ctx):
    # amax = qmax makes the scale exactly 1, so x / scale is exactly the tie and every output an integer.
    ties = [-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 126.5]
    inputs = ties + [127.0]
    x = torch.tensor(inputs, device=ctx.device)
    where = "bits=8, amax=127 so scale = amax / qmax = 127 / 127 = 1"
    out = as_tensor(call(ctx, x.clone(), 8, None), x, where).double().cpu()
    got = out.tolist()
    broken = [(t, o) for t, o in zip(inputs, got) if not math.isfinite(o)]
    if broken:
        fail(f"{where}: {len(broken)} of {len(inputs)} outputs are NaN/inf "
             f"({'; '.join(f'{fmt(t)} -> {o}' for t, o in broken[:3])})")
    off_grid = [(t, o) for t, o in zip(inputs, got) if not is_close(o, round(o), Tol(atol=1e-4))]
    if off_grid:
        # Not a rounding mode: no rounding of x / 1 gives a non-integer. The scale is another one.
        shown = "; ".join(f"{fmt(t)} -> {fmt(o)}" for t, o in off_grid[:3])
        step = implied_step(out, 2 * 2 ** 8)
        implied = (f"your outputs are multiples of {step:.6g} = amax / {127 / step:.6g}, not of 1"
                   if step else "your outputs are not multiples of 1, nor of any other step")
        fail(f"{where}, and every output must be an integer, but {len(off_grid)} of {len(inputs)} are not "
             f"({shown}). The scale is wrong, not the rounding: {implied}; use scale = amax / qmax with "
             "qmax = 2**(bits-1) - 1 and amax = x.abs().max()")
    expected = torch.round(x.double().cpu()).tolist()
    wrong = [(t, e, o) for t, e, o in zip(inputs, expected, got) if not is_close(o, e, Tol(atol=1e-4))]
    if wrong:
        shown = "; ".join(f"{fmt(t)} -> expected {fmt(e)}, got {fmt(o)}" for t, e, o in wrong[:4])
        ties_wrong = [(t, e, o) for t, e, o in wrong if t in ties]
        half_up = [float(torch.floor(torch.tensor(t) + 0.5)) for t in inputs]
        away = [float(torch.sign(torch.tensor(t)) * torch.floor(torch.tensor(abs(t)) + 0.5)) for t in inputs]
        if got == half_up:
            why = ("your output matches floor(x / scale + 0.5), which rounds every tie up; torch.round "
                   "rounds half to even, as torch's fake_quantize does")
        elif got == away:
            why = ("your output matches rounding half away from zero (C's round(), sign(v) * floor(|v| + 0.5)); "
                   "torch.round rounds half to even, as torch's fake_quantize does")
        elif len(ties_wrong) == len(wrong):
            why = "torch.round rounds half to even, as torch's fake_quantize does"
        else:
            why = "every x here is an integer or a tie, so the output must be torch.round(x) clamped to [-127, 127]"
        fail(f"{where}: {len(wrong)} of {len(inputs)} values rounded otherwise than half to even ({shown}); {why}")


@CHECKS.add("all-zero", "An all-zero tensor, or channel, gives zeros (scale 1), never NaN")
def all_zero(ctx):
    cases = [("an all-zero x of shape (4, 5), per tensor", torch.zeros(4, 5, device=ctx.device), None)]
    channels = sample(ctx, (3, 4), seed=5)
    channels[1] = 0.0
    cases.append(("x of shape (3, 4) whose channel 1 is all zero, per channel, axis=0", channels, 0))
    for where, x, axis in cases:
        out = as_tensor(call(ctx, x.clone(), 8, axis), x, where)
        bad = int((~torch.isfinite(out)).sum())
        if bad:
            fail(f"{where}: {bad} of {x.numel()} outputs are NaN/inf: amax = 0 gives scale 0 and 0 / 0; "
                 "use scale = 1 where amax is 0")
        # Only the zeros are this check's business; the other values belong to the per-channel check.
        zeros = x == 0
        if not is_close(out[zeros], torch.zeros_like(out[zeros]), EXACT):
            fail(f"{where}: where x is 0 the output must be exactly 0 (0 is a level of every symmetric grid), "
                 f"got values up to {out[zeros].abs().max().item():.3g}")
    quantizes(ctx)


def tiny_input(ctx, dtype, shape, amax, seed):
    """A sample scaled, in float64, so that its amax is exactly `amax`, then cast to dtype."""
    x = sample(ctx, shape, seed, torch.float64)
    return (x / x.abs().max() * amax).to(dtype)


def exact_fake_quant(x, bits, axis):
    """The contract's formula in float64, cast to x's dtype: torch's kernels multiply by 1 / scale in
    float32, which is not to be trusted at a scale of 1e-10."""
    qmax = 2 ** (bits - 1) - 1
    x64 = x.double()
    scale = pinned_scale(x64, bits, axis)
    return (torch.clamp(torch.round(x64 / scale), -qmax, qmax) * scale).to(x.dtype), scale


@CHECKS.add("tiny-amax", "A tiny non-zero amax (1e-6, 1e-8) uses scale = amax / qmax, no floor")
def tiny_amax(ctx):
    for n, (dtype, bits, shape, axis, size) in enumerate(TINY):
        qmax = 2 ** (bits - 1) - 1
        x = tiny_input(ctx, dtype, shape, size, seed=90 + n)
        where = f"{describe(bits, axis, shape, dtype)}, amax {fmt(size)}"
        out = as_tensor(call(ctx, x.clone(), bits, axis), x, where).to(dtype)
        expected, scale = exact_fake_quant(x, bits, axis)
        level = x.double() / scale
        near_tie = (((level - level.floor()) - 0.5).abs() < TIE_WINDOW).cpu()
        step = scale.expand_as(x).to(dtype).double()
        # Right to 1e-5 of the value, or to 1e-3 of its own quantization step (measured in steps).
        wrong = ~(close_elements(out, expected, Tol(rtol=1e-5))
                  | close_elements(out.double() / step, expected.double() / step, Tol(atol=1e-3)))
        wrong &= ~near_tie
        if not wrong.any():
            continue
        # The same x times a power of two, to amax about 1: exactly the same computation for a solution whose
        # result does not depend on how small amax is. If it answers alike, its mistake is not this check's
        # business (the per-tensor and per-channel checks report it); a floor or a threshold answers otherwise.
        power = 2.0 ** round(-math.log2(size))
        unit = x * power
        unit_out = as_tensor(call(ctx, unit.clone(), bits, axis), unit, where).to(dtype)
        if is_close(out.double() * power, unit_out.double(), Tol(rtol=1e-6, atol=1e-6 / qmax)):
            continue
        i = tuple(int(v) for v in wrong.nonzero()[0])
        if axis is None:
            group, what = torch.ones_like(x, dtype=torch.bool), "the tensor"
        else:
            group = torch.zeros_like(x, dtype=torch.bool)
            group.select(axis, i[axis]).fill_(True)
            what = f"channel {i[axis]}"
        amax = float(x.double()[group].abs().max())
        exact = amax / qmax
        detail = f"at index {i}: x = {float(x[i]):.6g}, expected {float(expected[i]):.6g}, got {float(out[i]):.6g}"
        if bool((out[group] == 0).all()):
            fail(f"{where}: the output of {what} is all zeros: a floor or a threshold zeroed a tensor whose amax is "
                 f"{amax:.3g}; scale = amax / qmax = {exact:.3g} works at any non-zero amax, with no minimum")
        found = implied_step(out[group], 2 * 2 ** bits)
        if found is not None and found > 1.001 * exact:
            floor = torch.clamp(torch.round(x.double()[group] / found), -qmax, qmax) * found
            if is_close(out[group].double(), floor, Tol(rtol=1e-5, atol=1e-3 * found)):
                eps = torch.finfo(torch.float32).eps
                if is_close(found, eps, Tol(rtol=1e-3)):
                    why = (f"matches scale = max(amax / qmax, {eps:.3g}), the floor torch.ao puts on the scale "
                           f"(torch.finfo(torch.float32).eps), where amax / qmax = {exact:.3g}")
                else:
                    why = (f"is on a grid of step {found:.3g}, {found / exact:.3g} times amax / qmax = {exact:.3g}: "
                           "a floor on the scale such as max(amax / qmax, eps), or an epsilon added to amax or the "
                           "scale")
                fail(f"{where}: {int(wrong.sum())} of {x.numel()} values differ from the formula ({detail}); your "
                     f"output for {what} {why}; use amax / qmax as it is (only amax = 0 gets scale 1)")
        fail(f"{where}: {int(wrong.sum())} of {x.numel()} values differ from clamp(round(x / scale), -qmax, qmax) * "
             f"scale with scale = amax / qmax = {exact:.3g} ({detail}), though the same x times {power:.6g} comes "
             "out right: something that depends on how small amax or the scale is (a floor, a threshold, an "
             "added epsilon) changes it; the contract has none")
    quantizes(ctx)


def clipped_by_magnitude(magnitude, zeroed, axis) -> bool:
    """Whether, in the tensor or in each channel, the zeroed positions are exactly those with |x| above
    some bound: what a clipped straight-through estimator does."""
    if axis is None:
        groups = [(magnitude, zeroed)]
    else:
        groups = [(magnitude.select(axis, c), zeroed.select(axis, c)) for c in range(magnitude.shape[axis])]
    for mag, zero in groups:
        if zero.any() and (~zero).any() and mag[zero].min() <= mag[~zero].max():
            return False
    return True


def straight_through_problem(where, x, grad, upstream, axis) -> str | None:
    """Why x.grad is not the upstream gradient, said by what it looks like, or None."""
    top = upstream.abs().max().item()
    bad = ~close_elements(grad, upstream, Tol(rtol=1e-6, of_largest=True)).to(grad.device)
    if not bad.any():
        return None
    n = x.numel()
    if is_close(grad, torch.zeros_like(grad), EXACT):
        return (f"{where}: x.grad is all zeros (expected the upstream gradient, up to {top:.3g}): torch.round has "
                "zero gradient; pass the gradient straight through, e.g. x + (quantized - x).detach()")
    magnitude = x.abs()
    amax = amax_of(x, axis).expand_as(x)
    at_amax = magnitude == amax
    zeroed = bad & (grad == 0)
    other = bad & ~zeroed
    k_other = int(other.sum())
    if other.any() and not (other & ~at_amax).any():
        i = tuple(int(v) for v in other.nonzero()[0])
        holder = "the element" if k_other == 1 else f"the {k_other} elements"
        if zeroed.any():
            return (f"{where}: x.grad is 0 at {int(zeroed.sum())} of {n} positions and non-zero only at {holder} "
                    f"holding amax (at {i}: expected {float(upstream[i]):.6g}, got {float(grad[i]):.6g}): torch.round "
                    "has zero gradient, so no straight-through estimator is at work, and what reaches amax leaks "
                    "through the scale; return x + (quantized - x).detach(), with amax from x.detach()")
        return (f"{where}: d out / d x must be 1 everywhere, but the gradient differs from the upstream one at "
                f"{holder} holding amax (at {i}: |x| = amax = {float(magnitude[i]):.4g}, expected "
                f"{float(upstream[i]):.6g}, got {float(grad[i]):.6g}): the scale carries gradient into amax; "
                "it is a constant: compute amax from x.detach()")
    if zeroed.any() and not other.any():
        k = int(zeroed.sum())
        many = f"the {k} of {n} positions" if k > 1 else "the 1 position"
        if bool(at_amax[zeroed].all()):
            i = tuple(int(v) for v in zeroed.nonzero()[0])
            own = "amax" if axis is None else "its channel's amax"
            which = f"exactly 0 at {many} where |x| reaches {own} (at {i}: |x| = {float(magnitude[i]):.4g})"
        elif clipped_by_magnitude(magnitude, zeroed, axis):
            i = tuple(int(v) for v in zeroed.nonzero()[0])
            if axis is None:
                which = (f"exactly 0 at {many} where |x| >= {float(magnitude[zeroed].min()):.4g} (amax "
                         f"{float(amax.max()):.4g}), a clip bound below amax")
            else:
                which = (f"exactly 0 at {many} with the largest |x| of their channel, beyond a clip bound below "
                         f"the channel's amax (at {i}: |x| = {float(magnitude[i]):.4g}, amax {float(amax[i]):.4g})")
        else:
            i = tuple(int(v) for v in zeroed.nonzero()[0])
            which = (f"exactly 0 at {k} of {n} positions (at {i}: x = {float(x[i]):.4g}, upstream "
                     f"{float(upstream[i]):.4g})")
        return (f"{where}: x.grad is {which}, and the upstream gradient elsewhere: the estimator masks the gradient "
                "(a clipped STE, zero outside its clip range; with scale = amax / qmax nothing lies outside) where "
                "the contract wants d out / d x = 1 everywhere; pass the gradient through unchanged, at every position")
    factor = grad[upstream != 0] / upstream[upstream != 0]
    c = factor.mean().item() if factor.numel() else 0.0
    if factor.numel() and is_close(factor, torch.full_like(factor, c), Tol(atol=1e-5 * max(1.0, abs(c)))):
        return (f"{where}: x.grad is {c:.6g} times the upstream gradient at every position: d out / d x = {c:.6g}, "
                "not 1; the straight-through estimator passes the gradient on unchanged (no factor such as "
                "1 / scale or scale in the backward)")
    i = tuple(int(v) for v in bad.nonzero()[0])
    return (f"{where}: d out / d x must be 1 everywhere, but at {int(bad.sum())} of {n} positions the gradient "
            f"differs from the upstream one, by different amounts (at {i}: expected {float(upstream[i]):.6g}, got "
            f"{float(grad[i]):.6g}): something other than the estimator carries gradient, such as a scale computed "
            "from x; the scale is a constant: compute amax from x.detach()")


@CHECKS.add("straight-through-gradient", "Gradient is straight-through: d out / d x = 1, the scale a constant")
def straight_through(ctx):
    for bits, shape, axis in ((8, (6, 5), None), (4, (6, 5, 4), 1), (2, (32,), None)):
        where = describe(bits, axis, shape)
        x = sample(ctx, shape, seed=77).requires_grad_(True)
        before = x.detach().clone()
        upstream = sample(ctx, shape, seed=78)
        out = call(ctx, x, bits, axis)
        as_tensor(out, x, where)
        if shares_storage(out, x):
            changed = int((x.detach() != before).sum())
            how = f", quantized in place ({changed} of {x.numel()} values of x changed)" if changed else ""
            fail(f"{where}: the output is x itself{how}: autograd sees the identity, so no straight-through "
                 "estimator was exercised; return a new tensor, e.g. x + (quantized - x).detach()")
        if not out.requires_grad:
            fail(f"{where}: the output has requires_grad=False for an x that requires grad; no gradient reaches x "
                 "(the straight-through estimator passes it on unchanged)")
        with ctx.given(where):
            out.backward(upstream)
        if x.grad is None:
            fail(f"{where}: no gradient reached x")
        problem = straight_through_problem(where, before, x.grad, upstream, axis)
        if problem:
            fail(problem)


@CHECKS.add("dtype-shape-kept", "Keeps x's dtype (float64, bfloat16) and shape")
def dtype_shape(ctx):
    for dtype, shape, axis in ((torch.float64, (5, 7), None), (torch.float64, (4, 3, 2), 2),
                               (torch.bfloat16, (8, 4), None), (torch.float32, (9,), None)):
        x = sample(ctx, shape, seed=31, dtype=dtype)
        where = describe(8, axis, shape, dtype)
        out = call(ctx, x.clone(), 8, axis)
        as_tensor(out, x, where)
        if out.dtype != dtype:
            if out.dtype == torch.float32:
                culprit = "promoted it (a float32 constant or buffer such as torch.zeros(...) without dtype=x.dtype, " \
                          "or .float())"
            elif out.dtype == torch.float64:
                culprit = "promoted it (a float64 tensor such as torch.tensor(...) of numpy values, or .double())"
            else:
                culprit = f"turned it into {dtype_name(out.dtype)} (a cast such as .to(...) or .half(), or a tensor of that dtype)"
            fail(f"{where}: expected dtype {dtype_name(dtype)}, got {dtype_name(out.dtype)}: something in the "
                 f"computation {culprit}; build every tensor with x's dtype, or cast the result back with "
                 ".to(x.dtype)")
    quantizes(ctx)


@CHECKS.add("x-unchanged", "x is never modified: the result is a new tensor")
def x_unchanged(ctx):
    for bits, shape, axis, grad in ((8, (5, 7), None, False), (4, (4, 3, 2), 1, False), (8, (6, 5), None, True)):
        x = sample(ctx, shape, seed=41).requires_grad_(grad)
        before = x.detach().clone()
        where = describe(bits, axis, shape) + (", x requires grad" if grad else "")
        out = call(ctx, x, bits, axis)
        as_tensor(out, x, where)
        diff = (x.detach() - before).abs()
        changed = int((x.detach() != before).sum())
        how = f"x changed in {changed} of {x.numel()} places (largest change {diff.max().item():.3g})"
        if shares_storage(out, x):
            if changed:
                fail(f"{where}: the result is x itself, quantized in place: {how}; leave x as it was and return a "
                     "new tensor (x is the layer's weight or activation)")
            fail(f"{where}: the result shares x's memory (it is x itself or a view of it), so writing to one "
                 "changes the other; return a new tensor")
        if changed:
            fail(f"{where}: {how}, though the result is a new tensor: something writes into x (an in-place "
                 "operation, or .data); work on a copy and leave x as it was (it is the layer's weight or activation)")


@CHECKS.add("validation", "ValueError for bits outside 2..16 (and 16 bits works)")
def validation(ctx):
    x = sample(ctx, (4, 4), seed=3)
    for bits in BAD_BITS:
        try:
            result = ctx.solution.fake_quantize(x.clone(), bits=bits)
        except ValueError:
            continue
        except Exception as exc:  # noqa: BLE001 - the wrong exception is the finding
            fail(f"bits={bits}: expected ValueError, got {type(exc).__name__}: {exc}")
        shape = tuple(result.shape) if isinstance(result, torch.Tensor) else type(result).__name__
        fail(f"bits={bits}: expected ValueError (bits must be in 2..16), but it returned a result ({shape})")
    out = call(ctx, x.clone(), 16, None)
    expect_equal(describe(16, None, x.shape), x, out, torch_fake_quant(x, 16, None), 16, None)
