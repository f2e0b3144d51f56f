"""tensor_parallel: whether the module a rank built holds exactly its shards, and if not, which known
mistake it holds instead. Loaded by path, never imported by name."""

from __future__ import annotations

import torch

from quizapp.checking.harness import EXACT, is_close, mismatch, plural, sibling_module

scn = sibling_module(__file__, "scenarios")

SHARDS = ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")
FULL_WEIGHT = min(scn.IN * scn.HIDDEN, scn.HIDDEN * scn.OUT)  # the smaller full weight's elements


def rows_text(rank: int, world: int = scn.WORLD) -> str:
    r = scn.rows(rank, world)
    return f"{r.start}:{r.stop}"


def expected_name(name: str, rank: int, world: int = scn.WORLD) -> str:
    return {"fc1.weight": f"fc1.weight[{rows_text(rank, world)}]", "fc1.bias": f"fc1.bias[{rows_text(rank, world)}]",
            "fc2.weight": f"fc2.weight[:, {rows_text(rank, world)}]", "fc2.bias": "the whole fc2.bias"}[name]


def shard_problem(entry: dict, expected, name: str, rank: int, world: int, full: torch.Tensor | None,
                  other_slices: list) -> str | None:
    """Why one shard is not what rank `rank` of `world` must hold, or None."""
    want = expected_name(name, rank, world)
    if "missing" in entry:
        return (f"{entry['missing']} is missing; expected it to hold {want}"
                + (f" of shape {tuple(expected.shape)}" if expected is not None else " (None: that layer has no bias)"))
    if expected is None:
        if entry.get("none"):
            return None
        return f"m.{name} should be None (that layer has no bias), not a {entry.get('type', 'tensor')}"
    if entry.get("none"):
        return f"m.{name} is None; expected {want} of shape {tuple(expected.shape)}"
    if "tensor" not in entry:
        return f"m.{name} is a {entry['type']}; expected an nn.Parameter holding {want}"
    seen = scn.from_record(entry["tensor"])
    if seen.shape != expected.shape:
        problem = f"m.{name} has shape {tuple(seen.shape)}; expected {want} of shape {tuple(expected.shape)}"
    else:
        problem = mismatch(seen, expected, EXACT, exact_dtype=True, what=f"m.{name} entries", against=want)
    if problem:
        return problem + shard_cause(name, seen, full, rank, world, other_slices)
    if not entry["parameter"]:
        return (f"m.{name} holds the right {tuple(seen.shape)} values but is a plain tensor, not an nn.Parameter: "
                "m.parameters() would not yield it and no optimizer would train it")
    return None


TRANSPOSED = {
    "fc1.weight": ("fc1.weight[:, {rows}]", "nn.Linear stores weight as (out_features, in_features), the transpose "
                   "of the paper's A in Y = GELU(XA)B, so splitting A by columns (by hidden unit) takes rows of "
                   "fc1.weight"),
    "fc2.weight": ("fc2.weight[{rows}, :]", "fc2.weight is (out_features, h), the transpose of the paper's B, so "
                   "splitting B by rows (by hidden unit) takes columns of fc2.weight"),
}


def shard_cause(name: str, seen: torch.Tensor, full, rank: int, world: int, other_slices: list) -> str:
    """The known mistake a wrong shard is, if it is one: the whole tensor, the other dimension's slice,
    a split or scaled fc2.bias, another rank's slice."""
    if full is None:
        return ""
    rows = scn.rows(rank, world, full.shape[0] if name.startswith("fc1") else full.shape[-1])
    same = lambda candidate: candidate.shape == seen.shape and is_close(seen, candidate, EXACT)  # noqa: E731
    if name != "fc2.bias" and same(full):
        return f"; that is the whole {name} {tuple(full.shape)}: each rank holds only its 1/{world} of the hidden units"
    if name in TRANSPOSED:
        sliced = full[:, rows] if name == "fc1.weight" else full[rows, :]
        if same(sliced):
            written, why = TRANSPOSED[name]
            return f"; that is {written.format(rows=rows_text(rank, world))}: {why}"
    if name == "fc2.bias":
        if same(full[rows]):
            return (f"; that is fc2.bias[{rows_text(rank, world)}]: fc2.bias is not split, it belongs to the summed "
                    "output, and every rank holds all of it")
        if same(full / world):
            return f"; that is fc2.bias / {world}: every rank holds the whole fc2.bias"
    for k, other in enumerate(other_slices):
        if other is not None and same(other):
            return f"; that is rank {k}'s slice: `rank` is this process's rank within `group`, not the global one"
    return ""


def module_problems(record: dict, t, rank: int, fulls: dict) -> str | None:
    module = record["module"]
    if not module["is_module"]:
        return f"shard_mlp returned a {module['type']}; expected an nn.Module holding the {t.world} shards"
    for name in SHARDS:
        others = [t.shards[k][name] if k != rank else None for k in range(t.world)]
        problem = shard_problem(module["shards"][name], t.shards[rank][name], name, rank, t.world, fulls[name], others)
        if problem:
            return problem
    extra = [p for p in module["parameters"] if p["shard"] is None]
    if extra:
        p = extra[0]
        return (f"m.parameters() yields {plural(len(extra), 'tensor')} besides the shards, "
                f"first {p['name']} of shape {tuple(p['shape'])}: m holds this rank's shards and nothing else")
    listed_shards = {p["shard"] for p in module["parameters"]}
    absent = [n for n in SHARDS if t.shards[rank][n] is not None and n not in listed_shards]
    if absent:
        return (f"m.{absent[0]} is not among m.parameters() ({len(module['parameters'])} tensors): no optimizer "
                "would train it")
    big = [b for b in module["buffers"] if b["numel"] >= FULL_WEIGHT]
    if big:
        return (f"m holds the buffer {big[0]['name']} of {big[0]['numel']} elements, as large as a full weight "
                f"(fc1.weight has {scn.IN * scn.HIDDEN}): a rank keeps only its shards")
    return None


def fulls_of(index: int, seed: int | None = None, run=None) -> dict:
    fc1, fc2 = scn.build_layers(run or scn.RUNS[index], scn.seed_of(index) if seed is None else seed)
    return {"fc1.weight": fc1.weight.detach(), "fc1.bias": None if fc1.bias is None else fc1.bias.detach(),
            "fc2.weight": fc2.weight.detach(), "fc2.bias": None if fc2.bias is None else fc2.bias.detach()}
