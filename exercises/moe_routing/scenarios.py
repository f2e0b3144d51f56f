"""The inputs the checks hand to moe_forward: routers, experts and tokens, built the same way for the
learner's run and for the truth (truth.py), and the forward pre-hooks that record every expert call."""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

IDLE_BIAS = -30.0  # a router bias that keeps an expert's probability near e^-30: no token chooses it
# The relative gap the checks keep between a token's k-th and (k+1)-th probability wherever no tie is
# meant: another correct order of the same float32 operations (a softmax written out, a topk of the
# logits) moves a probability by about 1e-7 of itself, so a gap of 1e-4 never flips a choice. In
# bfloat16 the logits themselves are equal to the reference's (the same router(x)), so the same gap holds.
MARGIN = 1e-4


@dataclass(frozen=True)
class Case:
    tokens: int
    dim: int
    experts: int
    k: int
    sharpness: float = 1.0  # scale of the router's weights and bias: 0.05 near-uniform, 6 sharply peaked
    bias: bool = True
    dtype: str = "float32"
    idle: tuple = ()  # experts whose router bias is IDLE_BIAS
    # "rows": router rows duplicated; "bias": tokens that are zero, so their logits are the bias; "bf16":
    # no tie, but tokens whose k-th and (k+1)-th probabilities a bfloat16 softmax would round together
    ties: str = ""
    markers: bool = False  # experts that output a one-hot of their own index (see Marker)
    seed: int = 0


def describe(case: Case) -> str:
    words = [f"T={case.tokens} tokens, d={case.dim}, E={case.experts} experts, k={case.k}"]
    if case.sharpness <= 0.1:
        words.append("a near-uniform router")
    elif case.sharpness >= 4:
        words.append("a sharply peaked router")
    if not case.bias:
        words.append("router without bias")
    if case.idle:
        words.append(f"experts {' and '.join(map(str, case.idle))} idle (no token chooses them)")
    if case.ties == "rows":
        words.append("router rows 1 and 3" + (" (and 2 and 5)" if case.experts >= 6 else "") + " identical")
    if case.ties == "bias":
        words.append("every third token zero, so its logits are " + ("the bias alone" if case.bias else "all 0"))
    if case.ties == "bf16":
        words.append("tokens whose two border probabilities a bfloat16 softmax would round together")
    if case.dtype != "float32":
        words.append(case.dtype)
    if case.markers:
        words.append("marker experts")
    return ", ".join(words)


class Expert(nn.Module):
    """A small MLP, d -> 2d -> d. `forward_calls` counts calls of forward however they were made, so that
    a call that bypassed the module's __call__ (and its hooks) can be told apart from no call."""

    def __init__(self, dim: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)
        self.forward_calls = 0

    def forward(self, h):
        self.forward_calls += 1
        return self.fc2(F.silu(self.fc1(h)))


class Marker(nn.Module):
    """An expert whose output row is the one-hot of its own index, whatever the input: y[t, e] is then
    exactly the gate token t gave expert e, and 0 for an expert it did not choose."""

    def __init__(self, dim: int, index: int):
        super().__init__()
        self.register_buffer("mark", F.one_hot(torch.tensor(index), dim).float())
        self.forward_calls = 0

    def forward(self, h):
        self.forward_calls += 1
        return h * 0 + self.mark


@dataclass
class Inputs:
    x: torch.Tensor
    router: nn.Linear
    experts: nn.ModuleList
    weights: torch.Tensor  # w of the loss sum(y * w)


def _build(case: Case, seed: int) -> Inputs:
    g = torch.Generator().manual_seed(seed)
    d, n = case.dim, case.experts
    x = torch.randn(case.tokens, d, generator=g)
    router = nn.Linear(d, n, bias=case.bias)
    experts = nn.ModuleList(Marker(d, e) if case.markers else Expert(d) for e in range(n))
    with torch.no_grad():
        router.weight.copy_(torch.randn(n, d, generator=g) * case.sharpness / d ** 0.5)
        if case.bias:
            router.bias.copy_(torch.randn(n, generator=g) * 0.5 * case.sharpness)
            for e in case.idle:
                router.bias[e] = IDLE_BIAS
        for p in experts.parameters():
            p.copy_(torch.randn(p.shape, generator=g) / p.shape[-1] ** 0.5)
        if case.ties == "rows":  # experts 1 and 3 (and 2 and 5 where there are 6+) always tie
            for a, b in ((1, 3), (2, 5))[: 1 + (n >= 6)]:
                router.weight[b] = router.weight[a]
                if case.bias:
                    router.bias[b] = router.bias[a]
        if case.ties == "bias":
            x[::3] = 0.0  # every third token: logits = the bias alone (all zero without one)
            if case.bias:  # experts 0, 2 and E-2 share the largest bias: top-2 must break a tie
                router.bias.copy_(torch.linspace(-1, 0, n))
                router.bias[[0, 2, n - 2]] = 0.5
    w = torch.randn(case.tokens, d, generator=g)
    dtype = getattr(torch, case.dtype)
    return Inputs(x.to(dtype), router.to(dtype), experts.to(dtype), w.to(dtype))


def routing(x: torch.Tensor, router: nn.Module, k: int):
    """(float32 probabilities, torch.topk's choice) as the contract has them, on the inputs' device."""
    with torch.no_grad():
        probs = F.softmax(router(x), dim=-1, dtype=torch.float32)
        return probs, torch.topk(probs, k, dim=-1).indices


def _fits(case: Case, inputs: Inputs) -> bool:
    """Whether this seed's routing is what the case asks for: a clear gap below the k chosen experts,
    except exactly tied ones where ties are asked for (and then enough of them on the border)."""
    probs, chosen = routing(inputs.x, inputs.router, case.k)
    if case.idle and bool(torch.isin(chosen, torch.tensor(case.idle)).any()):
        return False
    if case.k == case.experts:
        return True
    ranked = probs.sort(dim=-1, descending=True).values
    last, first_out = ranked[:, case.k - 1], ranked[:, case.k]
    tied = last == first_out
    clear = (last - first_out) >= MARGIN * last
    if not bool((tied | clear).all()):
        return False
    if case.ties == "bf16":
        rounded_together = last.bfloat16() == first_out.bfloat16()
        return not bool(tied.any()) and int(rounded_together.sum()) >= 2
    return int(tied.sum()) >= 3 if case.ties else not bool(tied.any())


def pick_seed(case: Case) -> int:
    """The first seed from case.seed on whose routing fits the case (a few tries at most)."""
    for seed in range(case.seed, case.seed + 500):
        if _fits(case, _build(case, seed)):
            return seed
    raise AssertionError(f"no seed fits {case}")


def build(case: Case, device) -> Inputs:
    inputs = _build(case, pick_seed(case))
    return replace(inputs, x=inputs.x.to(device), router=inputs.router.to(device),
                   experts=inputs.experts.to(device), weights=inputs.weights.to(device))


# -- the cases -------------------------------------------------------------------------------

# The contract's shapes, with routers from near-uniform to sharply peaked, and one with idle experts.
MAIN = [
    Case(40, 6, 5, 2, seed=10),
    Case(40, 6, 5, 1, seed=20),
    Case(33, 4, 6, 3, sharpness=0.05, bias=False, seed=30),
    Case(17, 5, 4, 4, seed=40),
    Case(64, 8, 8, 2, sharpness=6.0, seed=50),
    Case(40, 6, 5, 2, idle=(1, 4), seed=60),
]
# The same routings read through marker experts (d widened to E where it is smaller, so every expert
# has a column of its own).
GATES = [replace(c, dim=max(c.dim, c.experts), markers=True) for c in MAIN]
TIES = [
    Case(40, 6, 5, 2, ties="rows", seed=70),
    Case(30, 6, 8, 3, ties="rows", seed=80),
    Case(24, 5, 5, 2, ties="bias", seed=90),
    Case(24, 4, 8, 3, ties="bias", bias=False, seed=100),
]
BF16 = [
    Case(64, 8, 8, 2, dtype="bfloat16", ties="bf16", seed=140),
    Case(40, 6, 5, 2, dtype="bfloat16", seed=110),
    Case(64, 8, 8, 2, sharpness=2.0, dtype="bfloat16", seed=120),
]
BAD_K = (0, -1)  # and E + 1
VALIDATION = Case(12, 4, 4, 2, seed=130)


class Calls:
    """Forward pre-hooks on the router and every expert, recording what each call received."""

    def __init__(self, router: nn.Module, experts: nn.ModuleList):
        self.router_calls = 0
        self.expert_calls: list[tuple[int, object]] = []  # (expert index, a copy of its input)
        self.active = True
        self._experts = list(experts)
        self._handles = [router.register_forward_pre_hook(self._on_router)]
        for e, expert in enumerate(experts):
            self._handles.append(expert.register_forward_pre_hook(self._on_expert(e), with_kwargs=True))

    def _on_router(self, module, args):
        if self.active:
            self.router_calls += 1

    def _on_expert(self, e: int):
        def hook(module, args, kwargs):
            if self.active:
                given = args[0] if args else next(iter(kwargs.values()), None)
                self.expert_calls.append((e, given.detach().clone() if isinstance(given, torch.Tensor)
                                          else type(given).__name__))

        return hook

    def forward_calls(self) -> list[int]:
        return [getattr(expert, "forward_calls", 0) for expert in self._experts]

    def stop(self) -> None:
        self.active = False
        for handle in self._handles:
            handle.remove()
