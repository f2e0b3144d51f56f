"""FLOP counting for the bench: by formula for a stack of Linear layers, and by torch's FlopCounterMode
for whatever a loop actually ran.

MFU counts useful model FLOPs (PaLM's convention): the matmuls of one forward and one backward, 2 FLOPs
per multiply-add. A Linear of `n_in -> n_out` on `b` rows costs 2·b·n_in·n_out forward and as much again
for each gradient backward (the weight's, and the input's unless nothing upstream needs it): the 6N
FLOPs per sample of a dense model, less the first layer's input gradient that no one asks for.
Elementwise work (GELU, the loss, the optimizer) is not counted: it is small, and memory-bound.
"""

from __future__ import annotations

from typing import Callable, Sequence


def linear_flops(rows: int, n_in: int, n_out: int) -> int:
    """Forward FLOPs of one Linear layer on `rows` rows."""
    return 2 * rows * n_in * n_out


def linear_stack_step_flops(rows: int, shapes: Sequence[tuple[int, int]], *, input_requires_grad: bool = False) -> int:
    """Forward plus backward matmul FLOPs of one training step of Linear layers in sequence (`shapes`:
    each layer's (in, out)): forward, the weights' gradients, and the inputs' gradients of every layer
    but the first (whose input needs none unless `input_requires_grad`)."""
    total = 0
    for i, (n_in, n_out) in enumerate(shapes):
        one = linear_flops(rows, n_in, n_out)
        total += one * (3 if i > 0 or input_requires_grad else 2)
    return total


def six_n_flops(params: int, tokens: float) -> float:
    """The 6N rule: training FLOPs for `tokens` samples (tokens) through a dense model of `params` parameters."""
    return 6.0 * params * tokens


def achieved_tflops(flops: float, seconds: float) -> float | None:
    return flops / seconds / 1e12 if seconds and seconds > 0 else None


def counted_flops(fn: Callable[[], object]) -> int:
    """The FLOPs torch counts while `fn()` runs (forward and backward matmuls, convolutions, attention),
    through torch.utils.flop_counter.FlopCounterMode."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn()
    return int(counter.get_total_flops())
