"""Behavioural checks for fake_quant: compare the learner's output with torch's own
fake_quantize_per_tensor_affine / per_channel_affine at the pinned scale, probe ties, zeros,
dtypes and the straight-through gradient."""

from __future__ import annotations

import torch

from quizapp.grading.harness import Checks, Required, fail, fmt

PER_TENSOR = [(bits, shape) for bits in (2, 4, 8) for shape in ((64,), (8, 16), (4, 3, 5))]
PER_CHANNEL = [(bits, shape, axis) for bits in (2, 4, 8)
               for shape, axis in (((6, 5, 4), 0), ((6, 5, 4), 1), ((6, 5, 4), 2), ((16, 8), 1))]
# x / scale within this of a half-integer: torch's kernel multiplies by 1/scale, which may round
# such a tie the other way than x / scale does; ties have a check of their own with exact inputs.
TIE_WINDOW = 1e-4
BAD_BITS = (1, 17, 0)

CHECKS = Checks(
    Required("fake_quantize", "(x, *, bits=8, axis=None) -> torch.Tensor",
             sample_args=(None,), sample_kwargs={"bits": 8, "axis": None}),
)


def sample(ctx, shape, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    # Channels of very different sizes, so a per-tensor scale would be visibly wrong per channel.
    x = torch.randn(*shape, generator=g) * torch.rand(*shape, generator=g).add(0.1) * 3
    return x.to(dtype).to(ctx.device)


def describe(bits, axis, shape, dtype=torch.float32) -> str:
    where = "per tensor" if axis is None else f"per channel, axis={axis}"
    kind = "" if dtype == torch.float32 else f" {str(dtype).replace('torch.', '')}"
    return f"bits={bits}, {where}, x of shape {tuple(shape)}{kind}"


def call(ctx, x, bits, axis):
    with ctx.given(describe(bits, axis, x.shape, x.dtype)):
        return ctx.solution.fake_quantize(x, bits=bits, axis=axis)


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


def pinned_scale(x, bits, axis):
    qmax = 2 ** (bits - 1) - 1
    amax = x.abs().amax() if axis is None else x.abs().amax(dim=[d for d in range(x.dim()) if d != axis], keepdim=True)
    return torch.where(amax > 0, amax / qmax, torch.ones_like(amax))


def as_tensor(out, x, where):
    if not isinstance(out, torch.Tensor):
        fail(f"{where}: expected a tensor, got {type(out).__name__}")
    if out.shape != x.shape:
        fail(f"{where}: expected the shape of x {tuple(x.shape)}, got {tuple(out.shape)}")
    return out.detach()


def expect_equal(where, x, out, expected, bits, axis):
    """Equal to torch's result everywhere except at near-ties (see TIE_WINDOW)."""
    out = as_tensor(out, x, where).to(expected.dtype)
    scale = pinned_scale(x, bits, axis)
    level = x / scale
    near_tie = ((level - level.floor()) - 0.5).abs() < TIE_WINDOW
    wrong = ~torch.isclose(out, expected, rtol=1e-6, atol=1e-7 * float(scale.max())) & ~near_tie
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
        if torch.allclose(out.to(guess.dtype), guess, rtol=1e-5, atol=1e-6):
            return f". Your output matches one where {why}"
    return ""


@CHECKS.add("per-tensor-matches-torch", "Per tensor: equals torch.fake_quantize_per_tensor_affine (bits 2, 4, 8)")
def per_tensor(ctx):
    for i, (bits, shape) in enumerate(PER_TENSOR):
        x = sample(ctx, shape, seed=10 + i)
        expect_equal(describe(bits, None, shape), x, call(ctx, x, bits, None), torch_fake_quant(x, bits, None), bits, None)


@CHECKS.add("per-channel-matches-torch", "Per channel: equals torch.fake_quantize_per_channel_affine on axes 0, 1, 2")
def per_channel(ctx):
    for i, (bits, shape, axis) in enumerate(PER_CHANNEL):
        x = sample(ctx, shape, seed=50 + i)
        expect_equal(describe(bits, axis, shape), x, call(ctx, x, bits, axis), torch_fake_quant(x, bits, axis), bits, axis)


@CHECKS.add("round-half-even", "Ties round half to even (x / scale = 0.5 -> 0, 1.5 -> 2, 2.5 -> 2)")
def round_half_even(ctx):
    # amax = qmax makes the scale exactly 1, so x / scale is exactly the tie.
    ties = [-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 126.5]
    x = torch.tensor(ties + [127.0], device=ctx.device)
    expected = torch.round(x)
    out = as_tensor(call(ctx, x, 8, None), x, "bits=8, amax=127 (scale exactly 1)")
    wrong = [(t, float(e), float(o)) for t, e, o in zip(ties, expected.tolist(), out.tolist()) if o != e]
    if wrong:
        shown = "; ".join(f"{t} -> expected {fmt(e)}, got {fmt(o)}" for t, e, o in wrong[:4])
        fail(f"bits=8, amax=127 so scale = 1: {len(wrong)} of {len(ties)} ties rounded otherwise than half to even "
             f"({shown}). torch.round and torch's fake_quantize round half to even; floor(x + 0.5) and Python's "
             "math-style rounding away from zero do not")


@CHECKS.add("all-zero", "An all-zero tensor, or channel, gives zeros (scale 1), never NaN")
def all_zero(ctx):
    cases = [("an all-zero x of shape (4, 5), per tensor", torch.zeros(4, 5, device=ctx.device), None)]
    channels = sample(ctx, (3, 4), seed=5)
    channels[1] = 0.0
    cases.append(("x of shape (3, 4) whose channel 1 is all zero, per channel, axis=0", channels, 0))
    for where, x, axis in cases:
        out = as_tensor(call(ctx, x, 8, axis), x, where)
        bad = int((~torch.isfinite(out)).sum())
        if bad:
            fail(f"{where}: {bad} of {x.numel()} outputs are NaN/inf: amax = 0 gives scale 0 and 0 / 0; "
                 "use scale = 1 where amax is 0")
        # Only the zeros are this check's business; the other values belong to the per-channel check.
        zeros = x == 0
        if out[zeros].abs().max().item() != 0:
            fail(f"{where}: where x is 0 the output must be exactly 0 (0 is a level of every symmetric grid), "
                 f"got values up to {out[zeros].abs().max().item():.3g}")


@CHECKS.add("straight-through-gradient", "Gradient is straight-through: d out / d x = 1, the scale a constant")
def straight_through(ctx):
    for bits, shape, axis in ((8, (6, 5), None), (4, (6, 5, 4), 1), (2, (32,), None)):
        where = describe(bits, axis, shape)
        x = sample(ctx, shape, seed=77).requires_grad_(True)
        upstream = sample(ctx, shape, seed=78)
        out = call(ctx, x, bits, axis)
        as_tensor(out, x, where)
        if not out.requires_grad:
            fail(f"{where}: the output has requires_grad=False for an x that requires grad; no gradient reaches x "
                 "(the straight-through estimator passes it on unchanged)")
        with ctx.given(where):
            out.backward(upstream)
        if x.grad is None:
            fail(f"{where}: no gradient reached x")
        diff = (x.grad - upstream).abs()
        if diff.max().item() > 1e-6 * upstream.abs().max().item():
            if x.grad.abs().max().item() == 0:
                fail(f"{where}: x.grad is all zeros (expected the upstream gradient, up to "
                     f"{upstream.abs().max().item():.3g}): torch.round has zero gradient; pass the gradient straight "
                     "through, e.g. x + (quantized - x).detach()")
            where_diff = diff > 1e-6 * upstream.abs().max().item()
            i = tuple(int(v) for v in where_diff.nonzero()[0])
            fail(f"{where}: d out / d x must be 1 everywhere, but at {int(where_diff.sum())} of {x.numel()} positions "
                 f"the gradient differs from the upstream one (at {i}: expected {float(upstream[i]):.6g}, got "
                 f"{float(x.grad[i]):.6g}); the scale is a constant for the gradient: compute amax from x.detach()")


@CHECKS.add("dtype-shape-kept", "Keeps x's dtype (float64, bfloat16) and shape, and leaves x unchanged")
def dtype_shape(ctx):
    for dtype, shape, axis in ((torch.float64, (5, 7), None), (torch.float64, (4, 3, 2), 2),
                               (torch.bfloat16, (8, 4), None), (torch.float32, (9,), None)):
        x = sample(ctx, shape, seed=31, dtype=dtype)
        before = x.clone()
        where = describe(8, axis, shape, dtype)
        out = call(ctx, x, 8, axis)
        as_tensor(out, x, where)
        if out.dtype != dtype:
            fail(f"{where}: expected dtype {dtype}, got {out.dtype}; compute in x's dtype (no .float())")
        if not torch.equal(x, before):
            changed = int((x != before).sum())
            fail(f"{where}: x itself changed in {changed} of {x.numel()} places; return a new tensor, never quantize "
                 "x in place (it is the layer's weight or activation)")


@CHECKS.add("validation", "ValueError for bits outside 2..16 (and 16 bits works)")
def validation(ctx):
    x = sample(ctx, (4, 4), seed=3)
    for bits in BAD_BITS:
        try:
            result = ctx.solution.fake_quantize(x, bits=bits)
        except ValueError:
            continue
        except Exception as exc:  # noqa: BLE001 - the wrong exception is the finding
            fail(f"bits={bits}: expected ValueError, got {type(exc).__name__}: {exc}")
        shape = tuple(result.shape) if isinstance(result, torch.Tensor) else type(result).__name__
        fail(f"bits={bits}: expected ValueError (bits must be in 2..16), but it returned a result ({shape})")
    expect_equal(describe(16, None, x.shape), x, call(ctx, x, 16, None), torch_fake_quant(x, 16, None), 16, None)
