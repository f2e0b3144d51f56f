"""zero_optimizer: the runs every rank makes, and the parameters and gradients they are made with.

Shared by rank.py (each rank builds its parameters and draws its own gradients) and truth.py (the
one-process torch.optim.AdamW it compares with), so both draw the same numbers from the same seeds.
Loaded by path, never imported by name.
"""

from __future__ import annotations

import math

import torch

SHAPES = ((6, 5), (6,), (3, 6), (3,), (4,))
NAMES = ("w1 (6, 5)", "b1 (6,)", "w2 (3, 6)", "b2 (3,)", "c (4,)")
SIZES = [math.prod(s) for s in SHAPES]
OFFSETS = [sum(SIZES[:i]) for i in range(len(SIZES))]
N = sum(SIZES)          # 61
WORLD = 2               # the ranks of every run on the default group
GROUP_WORLD = 4         # the ranks of the process-group runs, split into GROUPS
GROUPS = ([0, 1], [2, 3])

# The hyper-parameter sets: the defaults (nothing passed), then two of the contract's.
HYPER = ({}, {"lr": 0.02, "betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 0.1},
         {"lr": 0.05, "betas": (0.9, 0.99), "eps": 0.05, "weight_decay": 0.0})
DEFAULTS = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01}
STEPS = 5
NONE_STEPS = 6
# In the None-gradient runs (1-based steps): parameter index -> the steps at which it gets no gradient.
MISSING = {4: (1, 2), 1: (4,)}

# A run: (dtype, hyper-parameter set index, kind), kind "full" (every parameter gets a gradient at
# each of 5 steps) or "none" (6 steps, MISSING's gradients absent). float64 runs pass `params` as a
# list and zero gradients with zero_grad() (set_to_none=True); float32 "full" runs pass a generator
# and zero them with zero_grad(set_to_none=False).
RUNS = [(dtype, hp, "full") for dtype in ("float64", "float32") for hp in range(len(HYPER))]
RUNS += [(dtype, 1, "none") for dtype in ("float64", "float32")]
GROUP_RUNS = [("float64", 2, "full"), ("float32", 1, "none")]


def run_key(run) -> str:
    dtype, hp, kind = run
    return f"{dtype}/hp{hp}/{kind}"


def hyper_text(hp: int) -> str:
    if not HYPER[hp]:
        return "the default hyper-parameters"
    h = HYPER[hp]
    return f"lr={h['lr']:g}, betas={h['betas']}, eps={h['eps']:g}, weight_decay={h['weight_decay']:g}"


def describe(run) -> str:
    dtype, hp, kind = run
    text = f"{dtype}, {hyper_text(hp)}"
    if kind == "none":
        text += (f", {NONE_STEPS} steps, no gradient for {NAMES[4]} at steps 1 and 2 and for {NAMES[1]} at step 4")
    else:
        text += f", {STEPS} steps"
    return text + (", params as a generator" if uses_generator(run) else "")


def steps_of(run) -> int:
    return NONE_STEPS if run[2] == "none" else STEPS


def set_to_none(run) -> bool:
    return not (run[0] == "float32" and run[2] == "full")


def uses_generator(run) -> bool:
    return run[0] == "float32" and run[2] == "full"


def has_grad(run, index: int, step: int) -> bool:
    """Whether parameter `index` gets a gradient at (1-based) `step`."""
    return run[2] != "none" or step not in MISSING.get(index, ())


def seed_of(index: int, group: int = 0) -> int:
    return 3000 + 100 * group + index


def dtype_of(name: str) -> torch.dtype:
    return {"float64": torch.float64, "float32": torch.float32}[name]


def owned(rank: int, world: int = WORLD) -> tuple[int, int]:
    """The flat elements [start, end) rank `rank` owns: torch.chunk's ranges."""
    size = -(-N // world)
    return min(rank * size, N), min((rank + 1) * size, N)


def initial(run, seed: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(s, generator=g, dtype=torch.float64) * 0.5).to(dtype_of(run[0])) for s in SHAPES]


def upstream(run, seed: int, rank: int, step: int) -> list[torch.Tensor]:
    """Rank `rank`'s gradient of every parameter at `step`: its loss is sum_i (p_i * u_i).sum()."""
    g = torch.Generator().manual_seed(seed * 1000 + 37 * rank + step)
    return [torch.randn(s, generator=g, dtype=torch.float64).to(dtype_of(run[0])) for s in SHAPES]


def flat(tensors) -> torch.Tensor:
    return torch.cat([t.detach().reshape(-1) for t in tensors])


def element_text(i: int) -> str:
    """Flat element i as the learner reads it: the parameter and the index inside it."""
    p = max(k for k in range(len(SHAPES)) if OFFSETS[k] <= i)
    local = i - OFFSETS[p]
    index = []
    for dim in reversed(SHAPES[p]):
        index.append(local % dim)
        local //= dim
    return f"{NAMES[p].split()[0]}[{', '.join(map(str, reversed(index)))}] (flat element {i})"


def param_of(i: int) -> int:
    return max(k for k in range(len(SHAPES)) if OFFSETS[k] <= i)


def from_record(values: list, dtype: str) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64).to(dtype_of(dtype))
