"""tensor_parallel: the known mistake a wrong output or gradient is, in words, found by comparing it
with what each mistake gives (truth.py). Loaded by path, never imported by name."""

from __future__ import annotations

import torch

from quizapp.checking.harness import Tol, is_close, sibling_module

scn = sibling_module(__file__, "scenarios")
shards = sibling_module(__file__, "shards")
# A gradient world_size (or 1/world_size) times the expected one, whatever the dtype: the factor is
# exact, and every other mistake is off by far more than this.
FACTOR = Tol(rtol=1e-4, atol=1e-6)


def ratio_of(seen: torch.Tensor, expected: torch.Tensor) -> float:
    norm = float(expected.double().norm())
    return float(seen.double().norm()) / norm if norm else float("inf")


def output_cause(seen: torch.Tensor, t, rank: int, tol: Tol) -> str:
    w = t.world
    if seen.shape != t.output.shape or seen.dtype != t.output.dtype:
        return ""
    if "bias-each" in t.wrong and is_close(seen, t.wrong["bias-each"][rank], tol):
        rows = seen.numel() // t.bias.numel()  # the output rows, each holding the bias
        times = float(((seen - sum(t.partials)) * t.bias).sum() / (t.bias * t.bias).sum() / rows)
        return (f"; the output holds fc2.bias {times:.1f} times: fc2's bias was added on each of the {w} ranks before "
                "the all-reduce summed them; add it once, after the sum")
    if is_close(seen, t.wrong["no-sum"][rank], tol):
        return (f"; it is rank {rank}'s own partial output alone ({t.shards[rank]['fc2.weight'].shape[1]} of "
                f"{scn.HIDDEN} hidden units): the {w} ranks' partial outputs were never summed; all-reduce (sum) "
                "them after the row-parallel matmul")
    if is_close(seen, t.wrong["sum-hidden"][rank], tol) or is_close(seen, t.wrong["sum-pre-gelu"][rank], tol):
        return (f"; the all-reduce came before the row-parallel matmul: it summed the {w} ranks' hidden "
                f"activations, which are different hidden units ({shards.rows_text(0, w)} on rank 0, "
                f"{shards.rows_text(1, w)} on rank 1); multiply by the fc2 shard first, then all-reduce the "
                f"(..., {scn.OUT}) partial outputs")
    if is_close(seen, t.wrong["tanh"][rank], tol):
        gap = float((t.wrong["tanh"][rank] - t.output).abs().max())
        return (f"; it matches GELU's tanh approximation, which is {gap:.2g} away from the exact GELU here: use "
                "F.gelu(h) (approximate='none', the erf form)")
    return ""


def gradient_cause(name: str, seen: torch.Tensor, expected: torch.Tensor, t) -> str:
    w = t.world
    if seen.shape != expected.shape:
        return ""
    ratio = ratio_of(seen, expected)
    if is_close(seen, expected * w, FACTOR):
        return (f"; it is {ratio:.1f}x the expected: g's backward all-reduced the output's gradient again "
                "(torch.distributed.nn.functional.all_reduce and the functional collectives' all_reduce are "
                f"differentiable, their backward is an all-reduce too, so every gradient comes out {w}x); g's "
                "backward is the identity: every rank already holds the whole output's gradient")
    if name == "fc2.bias" and is_close(seen, expected / w, FACTOR):
        return (f"; it is 1/{w} of the expected: fc2.bias / {w} was added on each rank's partial output, so each "
                f"rank's copy sees 1/{w} of the gradient; add the whole bias once, after the sum")
    return f"; its norm is {ratio:.4g}x the expected's"


def x_grad_cause(seen: torch.Tensor, t, rank: int, tol: Tol) -> str:
    w = t.world
    if seen.shape != t.x_grad.shape:
        return ""
    if is_close(seen, t.x_grad_shares[rank], tol):
        return (f"; it is only rank {rank}'s own share (the {w} ranks' shares sum to the expected): x's gradient "
                f"was never all-reduced; f is the identity forward and all-reduces (sums) x's gradient backward")
    if is_close(seen, t.x_grad * w, FACTOR):
        return (f"; it is {ratio_of(seen, t.x_grad):.1f}x the expected: the gradient was all-reduced twice, once "
                "by g's backward (a differentiable all-reduce used as g) and once by f's; g's backward is the identity")
    return f"; its norm is {ratio_of(seen, t.x_grad):.4g}x the expected's"
