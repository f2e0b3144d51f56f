"""tensor_parallel: the runs every rank makes, and the layers, inputs and loss they are made with.

Shared by rank.py (each rank builds its layers and input) and checks.py (the unsharded MLP it
compares with), so both draw the same numbers from the same seeds. Loaded by path, never imported
by name.
"""

from __future__ import annotations

import torch
from torch import nn

IN, HIDDEN, OUT = 5, 8, 6
ODD_HIDDEN = 7          # not divisible by 2 ranks: shard_mlp must raise ValueError
WORLD = 2               # the ranks of every run on the default group
GROUP_WORLD = 4         # the ranks of the process-group runs, split into GROUPS
GROUPS = ([0, 1], [2, 3])
LR = 0.1                # the SGD step taken on m.parameters() after each backward

DTYPES = ("float64", "float32")
SHAPES = ((3, 4, IN), (7, IN))
BIASES = ("both", "neither", "fc1-only")
BIAS_WORDS = {"both": "biases on both layers", "neither": "no biases", "fc1-only": "a bias on fc1 only"}

# Every run of the 2-rank launch: (dtype, x's shape, biases, x.requires_grad). The indivisible-h run
# is last, so a solution that breaks on it still has every other run recorded.
RUNS = [(dtype, shape, bias, grad) for dtype in DTYPES for shape in SHAPES for bias in BIASES
        for grad in (True, False)]
INDIVISIBLE = ("float64", SHAPES[0], "both", True)
ALL_RUNS = [*RUNS, INDIVISIBLE]
# The runs of the 4-rank launch: each group gets layers and an input of its own.
GROUP_RUNS = [("float64", SHAPES[0], "both", True), ("float32", SHAPES[1], "fc1-only", True)]


INDIVISIBLE_KEY = f"h={ODD_HIDDEN}"


def run_key(run) -> str:
    dtype, shape, bias, grad = run
    return f"{dtype}/x{tuple(shape)}/{bias}/{'grad' if grad else 'no-grad'}"


def describe(run) -> str:
    """The run in the learner's words, as a failure message starts."""
    dtype, shape, bias, grad = run
    return (f"{dtype}, in={IN} h={HIDDEN} out={OUT}, {BIAS_WORDS[bias]}, x of shape {tuple(shape)}"
            f"{' requiring grad' if grad else ' not requiring grad'}")


def seed_of(index: int, group: int = 0) -> int:
    return 1000 + 100 * group + index


def dtype_of(name: str) -> torch.dtype:
    return {"float64": torch.float64, "float32": torch.float32}[name]


def build_layers(run, seed: int, device="cpu", hidden: int = HIDDEN) -> tuple[nn.Linear, nn.Linear]:
    """fc1 (IN -> hidden) and fc2 (hidden -> OUT) with the run's biases and dtype, drawn from `seed`."""
    dtype, _, bias, _ = run
    g = torch.Generator().manual_seed(seed)
    fc1 = nn.Linear(IN, hidden, bias=bias in ("both", "fc1-only"), dtype=torch.float64)
    fc2 = nn.Linear(hidden, OUT, bias=bias == "both", dtype=torch.float64)
    with torch.no_grad():
        for layer in (fc1, fc2):
            layer.weight.copy_(torch.randn(layer.weight.shape, generator=g, dtype=torch.float64) * 0.6)
            if layer.bias is not None:  # a bias as large as the outputs: one added twice shows
                layer.bias.copy_(torch.randn(layer.bias.shape, generator=g, dtype=torch.float64))
    return fc1.to(device=device, dtype=dtype_of(dtype)), fc2.to(device=device, dtype=dtype_of(dtype))


def build_input(run, seed: int, device="cpu") -> torch.Tensor:
    dtype, shape, _, grad = run
    g = torch.Generator().manual_seed(seed + 50)
    x = torch.randn(shape, generator=g, dtype=torch.float64).to(device=device, dtype=dtype_of(dtype))
    return x.requires_grad_(grad)


def upstream(run, seed: int, device="cpu") -> torch.Tensor:
    """The loss's gradient with respect to the output: loss = (m(x) * upstream).sum() on every rank."""
    dtype, shape, _, _ = run
    g = torch.Generator().manual_seed(seed + 70)
    return torch.randn((*shape[:-1], OUT), generator=g, dtype=torch.float64).to(device=device, dtype=dtype_of(dtype))


def rows(rank: int, world: int, hidden: int = HIDDEN) -> slice:
    s = hidden // world
    return slice(rank * s, (rank + 1) * s)


def from_record(record: dict) -> torch.Tensor:
    """A tensor a rank recorded (rank.py), in its own dtype: float64 values hold float32 ones exactly."""
    values = torch.tensor(record["values"], dtype=torch.float64).reshape(record["shape"])
    dtype = getattr(torch, record["dtype"], None)
    return values.to(dtype) if isinstance(dtype, torch.dtype) and dtype.is_floating_point else values
