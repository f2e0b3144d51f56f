"""One rank of a tensor_parallel grade, started by quizapp/checking/launch.py: forked from the
grade's child (`serve`), or as `python rank.py --rank R ...` where CUDA is in use and forking is not safe.

Joins the process group and makes every run: 2 ranks make scenarios.ALL_RUNS on the default group;
4 ranks make scenarios.GROUP_RUNS, each half in a group of its own. A run calls the learner's
`shard_mlp`, runs the module forward and backward and takes one SGD step, and records what it saw
(the shards, the output, the gradients, the layers it was given, and every collective each stage
issued, counted by a TorchDispatchMode) to one JSON file. The checks judge the records.

Joining, the groups, the files the launcher reads and what an error ends are quizapp/checking/ranks.py's;
this module is what a run does.
"""

from __future__ import annotations

import functools

import torch
import torch.distributed as dist
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from quizapp.checking import ranks
from quizapp.checking.ranks import learner_error

NAMESPACES = ("c10d", "_c10d_functional", "_c10d_functional_autograd")
# Ops of those namespaces that move no data between ranks: waiting on a result, wrapping it.
NOT_COLLECTIVES = {"wait_tensor", "_wrap_tensor_autograd", "check_for_nan"}
SHARDS = ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")


def make_record(scn, solution, place: dict, device, index: int, run, seed: int, solution_path: str) -> dict:
    """One run's record; on the default group, the run after scn.RUNS is the indivisible one."""
    if place["group"] is None and index == len(scn.RUNS):
        return run_indivisible(scn, solution, place, device, run, seed, solution_path)
    return run_one(scn, solution, place, device, run, seed, solution_path)


serve = functools.partial(ranks.serve, make_record=make_record, default_runs="ALL_RUNS")

# -- counting collectives ---------------------------------------------------------------------

class Collectives(TorchDispatchMode):
    """Every c10d collective run while it is active, whichever API issued it (dist.* sync or async,
    functional collectives, torch.distributed.nn), in backward too: they all reach the dispatcher as
    ops of the c10d and _c10d_functional namespaces."""

    def __init__(self):
        super().__init__()
        self.seen: list[dict] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.namespace in NAMESPACES:
            name = func._schema.name.split("::")[-1]
            if name not in NOT_COLLECTIVES:
                self.seen.append(describe_collective(func, name, args, kwargs))
        return func(*args, **kwargs)


def describe_collective(func, name: str, args, kwargs) -> dict:
    bare = name.strip("_")
    if bare.startswith(("allreduce", "all_reduce")):
        kind = "all-reduce"
    elif bare.startswith(("allgather", "all_gather")):
        kind = "all-gather"
    elif "reduce_scatter" in bare:
        kind = "reduce-scatter"
    elif bare.startswith("broadcast"):
        kind = "broadcast"
    else:
        kind = bare.replace("_", "-")
    named = {a.name: v for a, v in zip(func._schema.arguments, args)} | kwargs
    return {"kind": kind, "op": f"{func.namespace}.{name}", "group_size": _group_size(named),
            "elements": _elements(args[0] if args else None)}


def _group_size(named: dict) -> int | None:
    try:
        if "process_group" in named:
            return dist.ProcessGroup.unbox(named["process_group"]).size()
        if "group_name" in named:
            return dist.distributed_c10d._resolve_process_group(named["group_name"]).size()
    except Exception:  # noqa: BLE001 - a group we cannot read: the count still holds
        return None
    return None


def _elements(value) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, (list, tuple)):
        return sum(_elements(v) for v in value)
    return 0


# -- one run ----------------------------------------------------------------------------------

def run_one(scn, solution, place: dict, device, run, seed: int, solution_path: str) -> dict:
    fc1, fc2 = scn.build_layers(run, seed, device)
    given = {name: _attr(fc1 if name.startswith("fc1") else fc2, name.split(".")[1]) for name in SHARDS}
    record: dict = {}
    stage = "shard_mlp"
    try:
        with Collectives() as seen:
            m = solution.shard_mlp(fc1, fc2, **place)
        record["shard_collectives"] = seen.seen
        stage = "reading the module"
        record["module"] = module_record(m, given)
        x = scn.build_input(run, seed, device)
        stage = "forward"
        with Collectives() as seen:
            out = m(x)
        record["forward_collectives"] = seen.seen
        record["output"] = output_record(out)
        why_not = backward_problem(out, (*x.shape[:-1], scn.OUT))
        if why_not:
            record["no_backward"] = why_not
        else:
            stage = "backward"
            loss = (out * scn.upstream(run, seed, device)).sum()
            with Collectives() as seen:
                loss.backward()
            record["backward_collectives"] = seen.seen
            record["grads"] = {name: _grad_record(_shard(m, name)) for name in SHARDS}
            record["x_grad"] = as_record_or_none(x.grad)
            stage = "the SGD step"
            params = list(m.parameters()) if isinstance(m, nn.Module) else []
            if params:
                sgd_step(params, scn.LR)
                record["stepped"] = True
    except BaseException as exc:  # noqa: BLE001 - the learner's error ends this run, recorded against it
        record["error"] = learner_error(exc, stage, solution_path)
    record["originals"] = originals_record(fc1, fc2, given)
    return record


def run_indivisible(scn, solution, place: dict, device, run, seed: int, solution_path: str) -> dict:
    """h not divisible by the world size: what shard_mlp raised, and what it sent first."""
    fc1, fc2 = scn.build_layers(run, seed, device, hidden=scn.ODD_HIDDEN)
    with Collectives() as seen:
        try:
            m = solution.shard_mlp(fc1, fc2, **place)
            outcome = {"raised": None, "returned": type(m).__name__}
        except BaseException as exc:  # noqa: BLE001 - what it raised is what the check reads
            error = learner_error(exc, "shard_mlp", solution_path)
            outcome = {"raised": type(exc).__name__, "value_error": isinstance(exc, ValueError),
                       "message": error["message"]}
    return {"outcome": outcome, "collectives": seen.seen}


def sgd_step(params, lr: float) -> None:
    """Plain SGD, as torch.optim.SGD(params, lr) steps: p -= lr * p.grad, in place, so that a shard
    sharing storage with the original layer writes into it as any optimizer would."""
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p.add_(p.grad, alpha=-lr)




def backward_problem(out, shape) -> str | None:
    """Why the loss cannot be formed from the output, or None."""
    if not isinstance(out, torch.Tensor):
        return f"m(x) returned a {type(out).__name__}, not a tensor"
    if tuple(out.shape) != tuple(shape):
        return f"m(x) has shape {tuple(out.shape)}, expected {tuple(shape)}"
    if not out.requires_grad:
        return "m(x) does not require grad: no gradient can reach the shards"
    return None


def module_record(m, given: dict) -> dict:
    """What m holds: each shard (or why there is none), its parameters, its buffers."""
    record = {"type": type(m).__name__, "is_module": isinstance(m, nn.Module), "shards": {}}
    for name in SHARDS:
        layer, part = name.split(".")
        holder = getattr(m, layer, _MISSING)
        value = _MISSING if holder is _MISSING else getattr(holder, part, _MISSING)
        if holder is _MISSING:
            entry = {"missing": f"m.{layer}"}
        elif value is _MISSING:
            entry = {"missing": f"m.{name}"}
        elif value is None:
            entry = {"none": True}
        elif isinstance(value, torch.Tensor):
            entry = {"tensor": _plain_record(value), "parameter": isinstance(value, nn.Parameter),
                     "shares": [g for g, t in given.items() if t is not None and _same_storage(value, t)]}
        else:
            entry = {"type": type(value).__name__}
        record["shards"][name] = entry
    if isinstance(m, nn.Module):
        ids = {id(_shard(m, name)): name for name in SHARDS if isinstance(_shard(m, name), torch.Tensor)}
        record["parameters"] = [{"shard": ids.get(id(p)), "name": n, "shape": list(p.shape)}
                                for n, p in m.named_parameters()]
        record["buffers"] = [{"name": n, "shape": list(b.shape), "numel": b.numel()} for n, b in m.named_buffers()]
    return record


def output_record(out) -> dict:
    if isinstance(out, torch.Tensor):
        return {"tensor": _plain_record(out)}
    return {"type": type(out).__name__}


def originals_record(fc1, fc2, given: dict) -> dict:
    """fc1 and fc2 as the run left them: their parameters, features, and any gradient they got."""
    now = {name: _attr(fc1 if name.startswith("fc1") else fc2, name.split(".")[1]) for name in SHARDS}
    return {
        "replaced": [name for name in SHARDS if now[name] is not given[name]],
        "values": {name: as_record_or_none(t) for name, t in now.items()},
        "features": {"fc1": [getattr(fc1, "in_features", None), getattr(fc1, "out_features", None)],
                     "fc2": [getattr(fc2, "in_features", None), getattr(fc2, "out_features", None)]},
        "grads": [name for name in SHARDS for t in {id(now[name]): now[name], id(given[name]): given[name]}.values()
                  if isinstance(t, torch.Tensor) and t.grad is not None],
    }


_MISSING = object()


def _attr(obj, name):
    return getattr(obj, name, None)


def _shard(m, name: str):
    layer, part = name.split(".")
    return getattr(getattr(m, layer, None), part, None)


def _grad_record(t) -> dict | None:
    if not isinstance(t, torch.Tensor):
        return None
    return {"grad": None if t.grad is None else _plain_record(t.grad)}


def _plain_record(t: torch.Tensor) -> dict:
    from quizapp.checking.harness import plain

    tensor = plain(t)  # a subclass read as the plain tensor it holds
    with torch.no_grad():
        record = {"dtype": str(tensor.dtype).replace("torch.", ""), "shape": list(tensor.shape),
                  "values": tensor.detach().to(device="cpu", dtype=torch.float64).reshape(-1).tolist(),
                  "requires_grad": bool(tensor.requires_grad)}
    return record


def as_record_or_none(t) -> dict | None:
    return _plain_record(t) if isinstance(t, torch.Tensor) else None


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    try:
        if a.device != b.device:
            return False
        pa, pb = a.untyped_storage().data_ptr(), b.untyped_storage().data_ptr()
        return pa != 0 and pa == pb
    except Exception:  # noqa: BLE001 - a tensor without storage (meta, a subclass) shares none we can see
        return False


if __name__ == "__main__":
    ranks.spawned_main(__file__, serve)
