"""tiled_attention: the inputs every check runs on, built afresh for each call from a seed (so that
no call sees what another wrote into its tensors), in the layouts the contract allows. Loaded by path
(sibling_module), never imported by name."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

DTYPES = {"float64": torch.float64, "float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass(frozen=True)
class Case:
    b: int
    h: int
    nq: int
    nk: int
    d: int
    dv: int
    block: int
    causal: bool = False
    dtype: str = "float32"
    qk_std: float = 2.0  # of q and of k: scores of standard deviation qk_std**2 (the scale undoes sqrt(D))
    v_std: float = 2.0
    layout: str = "contiguous"  # or "transposed", "strided", "expanded": see make()
    large: str = ""  # "mixed" or "negative": scores of magnitude 1e4 (see large_values)
    seed: int = 0

    @property
    def blocks(self) -> int:
        return -(-self.nk // self.block)

    def but(self, **changes) -> Case:
        return replace(self, **changes)


LAYOUTS = {
    "contiguous": "",
    "transposed": ", q, k, v transposes of (B, N, H, D) tensors",
    "strided": ", q, k, v every other column of a wider tensor (last stride 2)",
    "expanded": ", k and v one head expanded over all H (stride 0)",
}


def shape_text(c: Case) -> str:
    return f"(B, H, Nq, Nk, D, Dv) = ({c.b}, {c.h}, {c.nq}, {c.nk}, {c.d}, {c.dv})"


def describe(c: Case) -> str:
    """The inputs in words, as every message starts."""
    blocks = f"{c.blocks} key block{'s' if c.blocks != 1 else ''}"
    if c.nk % c.block:
        blocks += f", the last of {c.nk % c.block}" if c.blocks > 1 else f" of {c.nk}, shorter than block_size"
    size = {"mixed": ", scores up to ~1e4 of both signs", "negative": ", every score near -1e4"}.get(c.large, "")
    return (f"{shape_text(c)}, block_size={c.block} ({blocks}), causal={c.causal}, {c.dtype}{size}"
            f"{LAYOUTS[c.layout]}")


def _values(c: Case) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """q, k, v as float64 (B, H, N, D) values, before the cast to the case's dtype."""
    g = torch.Generator().manual_seed(1000 + c.seed)
    if c.large:
        return large_values(c, g)
    q = torch.randn(c.b, c.h, c.nq, c.d, generator=g, dtype=torch.float64) * c.qk_std
    k = torch.randn(c.b, c.h, c.nk, c.d, generator=g, dtype=torch.float64) * c.qk_std
    v = torch.randn(c.b, c.h, c.nk, c.dv, generator=g, dtype=torch.float64) * c.v_std
    return q, k, v


def large_values(c: Case, g: torch.Generator):
    """Scores of magnitude 1e4 that float32 holds exactly: integer (or 1/64-step) entries, D a power of
    4 so that 1/sqrt(D) is a power of 2. "mixed": random signs, up to ~1e4 either way; "negative": q
    near +50 and k near -50 everywhere, so every score is -1e4 + a spread of a few units per row."""
    assert c.d in (4, 16, 64), "1/sqrt(D) must be a power of 2 for exact float32 scores"
    if c.large == "mixed":
        q = torch.randint(-100, 101, (c.b, c.h, c.nq, c.d), generator=g).double()
        k = torch.randint(-100, 101, (c.b, c.h, c.nk, c.d), generator=g).double()
    else:
        base = round(math.sqrt(1e4 / math.sqrt(c.d)))  # -base^2 * D / sqrt(D) = -1e4: 50 for D = 16
        q = base + torch.randint(-2, 3, (c.b, c.h, c.nq, c.d), generator=g).double()
        k = -base + torch.randint(-3, 4, (c.b, c.h, c.nk, c.d), generator=g).double() / 64
    v = torch.randn(c.b, c.h, c.nk, c.dv, generator=g, dtype=torch.float64) * c.v_std
    return q, k, v


def exact_values(c: Case) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The values the solution is given, in float64 on the CPU (rounded to the case's dtype first)."""
    dtype = DTYPES[c.dtype]
    return tuple(t.to(dtype).double() for t in _values(c))


def make(c: Case, device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Fresh q, k, v for one call, on `device`, in the case's dtype and layout (the same values in
    every layout)."""
    dtype = DTYPES[c.dtype]
    q, k, v = (t.to(dtype) for t in _values(c))
    if c.layout == "transposed":  # a (B, N, H, D) tensor seen as (B, H, N, D), as after a head split
        return tuple(t.transpose(1, 2).contiguous().to(device).transpose(1, 2) for t in (q, k, v))
    if c.layout == "strided":  # every other column of a wider tensor
        def spread(t):
            wide = torch.zeros(*t.shape[:-1], 2 * t.shape[-1], dtype=dtype)
            wide[..., ::2] = t
            return wide.to(device)[..., ::2]
        return spread(q), spread(k), spread(v)
    if c.layout == "expanded":  # multi-query: one key/value head seen by every query head
        return (q.to(device), k[:, :1].to(device).expand_as(k), v[:, :1].to(device).expand_as(v))
    return q.to(device), k.to(device), v.to(device)


def exact_inputs(c: Case) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """exact_values as the layout changes them (the expanded layout repeats head 0's keys and values)."""
    q, k, v = exact_values(c)
    if c.layout == "expanded":
        k, v = k[:, :1].expand_as(k).contiguous(), v[:, :1].expand_as(v).contiguous()
    return q, k, v


def memory_bound(c: Case) -> int:
    """The contract's bound on the elements of any tensor an op returns during the call."""
    return c.b * c.h * max(c.nq * c.block, (max(c.nq, c.nk) + c.block) * max(c.d, c.dv))
