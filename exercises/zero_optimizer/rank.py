"""One rank of a zero_optimizer grade, started by quizapp/checking/launch.py: forked from the grade's
child (`serve`), or as `python rank.py --rank R ...` where CUDA is in use and forking is not safe.

Joins the process group and makes every run: 2 ranks make scenarios.RUNS on the default group; 4
ranks make scenarios.GROUP_RUNS, each half in a group of its own. A run builds the parameters,
constructs the learner's ShardedAdamW and takes its steps, each after zero_grad() and a backward of
this rank's own loss, and records to one JSON file what it saw after every step: the parameters,
state_numel(), the tensors reachable from the optimizer, the gradients zero_grad left, and every
torch.optim optimizer built during the run. The checks judge the records.

Joining, the groups, the files the launcher reads and what an error ends are quizapp/checking/ranks.py's;
this module is what a run does.
"""

from __future__ import annotations

import contextlib
import functools
import types

import torch
from torch import nn

from quizapp.checking import ranks
from quizapp.checking.ranks import learner_error

WALK_DEPTH = 12


def make_record(scn, solution, place: dict, device, index: int, run, seed: int, solution_path: str) -> dict:
    return run_one(scn, solution, place, device, run, seed, solution_path)


serve = functools.partial(ranks.serve, make_record=make_record)


# -- one run ----------------------------------------------------------------------------------

def run_one(scn, solution, place: dict, device, run, seed: int, solution_path: str) -> dict:
    params = [nn.Parameter(t.to(device)) for t in scn.initial(run, seed)]
    hyper = scn.HYPER[run[1]]
    to_none = scn.set_to_none(run)
    record: dict = {"steps": [], "optimizers": []}
    stage = "ShardedAdamW(...)"
    try:
        with recording_optimizers(params, record["optimizers"]):
            given = (p for p in params) if scn.uses_generator(run) else list(params)
            opt = solution.ShardedAdamW(given, **place, **hyper)
            for step in range(1, scn.steps_of(run) + 1):
                stage = f"zero_grad(set_to_none={to_none}) before step {step}"
                opt.zero_grad(set_to_none=to_none)
                left = grad_states(params)
                stage = f"the backward before step {step}"
                ups = scn.upstream(run, seed, place["rank"], step)
                loss = sum((p * u.to(device)).sum() for i, (p, u) in enumerate(zip(params, ups))
                           if scn.has_grad(run, i, step))
                loss.backward()
                stage = f"step() {step}"
                opt.step()
                entry = {"params": [float(v) for v in scn.flat(params).to("cpu", torch.float64)],
                         "zero_grad": left if step > 1 else None}
                stage = f"state_numel() after step {step}"
                numel = opt.state_numel()
                entry["state_numel"] = numel if isinstance(numel, int) and not isinstance(numel, bool) else repr(numel)
                entry["memory"] = reachable(opt, params)
                record["steps"].append(entry)
            stage = f"zero_grad(set_to_none={to_none}) after the last step"
            opt.zero_grad(set_to_none=to_none)
            record["final_zero_grad"] = grad_states(params)
    except BaseException as exc:  # noqa: BLE001 - the learner's error ends this run, recorded against it
        record["error"] = learner_error(exc, stage, solution_path)
    return record


def grad_states(params) -> list[str]:
    """What each parameter's .grad is: "none", "zero" (a tensor of zeros) or "nonzero"."""
    states = []
    for p in params:
        g = p.grad
        states.append("none" if g is None else "zero" if not bool(g.detach().ne(0).any()) else "nonzero")
    return states


@contextlib.contextmanager
def recording_optimizers(params, built: list):
    """Record every torch.optim.Optimizer constructed inside: its class, and how many of the full
    parameters it holds among its tensors."""
    original = torch.optim.Optimizer.__init__
    ids = {id(p) for p in params}

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        try:
            held = [p for g in self.param_groups for p in g["params"]]
        except Exception:  # noqa: BLE001 - an optimizer we cannot read still counts as built
            held = []
        built.append({"type": type(self).__qualname__, "module": type(self).__module__,
                      "bases": [c.__name__ for c in type(self).__mro__],
                      "tensors": len(held), "full": sum(id(p) in ids for p in held)})

    torch.optim.Optimizer.__init__ = init
    try:
        yield
    finally:
        torch.optim.Optimizer.__init__ = original


# -- the memory the optimizer keeps -------------------------------------------------------------

def _storage_key(t: torch.Tensor):
    try:
        ptr = t.untyped_storage().data_ptr()
    except Exception:  # noqa: BLE001 - a tensor without storage (meta, a subclass) holds none we can count
        return None
    return (str(t.device), ptr) if ptr else None


_LEAVES = (str, bytes, int, float, bool, complex, type(None), types.ModuleType, type, types.FunctionType,
           types.BuiltinFunctionType, types.MethodType, torch.dtype, torch.device)


def reachable(opt, params) -> dict:
    """The storages reachable from the optimizer object, each counted once, less those shared with a
    parameter or a gradient and one-element ones: {"total": elements, "largest": [...]}."""
    excluded = set()
    for p in params:
        excluded.add(_storage_key(p))
        if p.grad is not None:
            excluded.add(_storage_key(p.grad))
    found: dict = {}
    seen: set = set()

    def walk(obj, path: str, depth: int) -> None:
        if depth > WALK_DEPTH or id(obj) in seen or isinstance(obj, _LEAVES):
            return
        seen.add(id(obj))
        if isinstance(obj, torch.Tensor):
            key = _storage_key(obj)
            if key is not None and key not in excluded and key not in found:
                n = obj.untyped_storage().nbytes() // max(obj.element_size(), 1)
                if n > 1:
                    found[key] = {"elements": n, "where": path, "shape": list(obj.shape)}
            if obj.grad is not None:
                walk(obj.grad, f"{path}.grad", depth + 1)
            return
        if isinstance(obj, dict):
            for k, v in list(obj.items()):
                walk(k, f"{path} (a key)", depth + 1)
                walk(v, f"{path}[{k!r}]" if isinstance(k, (str, int)) else f"{path}[...]", depth + 1)
            return
        if isinstance(obj, (list, tuple, set, frozenset)):
            for i, v in enumerate(list(obj)):
                walk(v, f"{path}[{i}]", depth + 1)
            return
        try:
            attrs = dict(object.__getattribute__(obj, "__dict__"))
        except Exception:  # noqa: BLE001 - no __dict__ (a C++ object): look at its slots only
            attrs = {}
        for kind in type(obj).__mro__:
            for slot in kind.__dict__.get("__slots__", ()) if isinstance(kind.__dict__.get("__slots__", ()),
                                                                          (tuple, list)) else ():
                with contextlib.suppress(Exception):
                    attrs.setdefault(slot, object.__getattribute__(obj, slot))
        for name, value in attrs.items():
            walk(value, f"{path}.{name}", depth + 1)

    walk(opt, "self", 0)
    largest = sorted(found.values(), key=lambda e: -e["elements"])
    return {"total": sum(e["elements"] for e in largest), "largest": largest[:4]}




if __name__ == "__main__":
    ranks.spawned_main(__file__, serve)
