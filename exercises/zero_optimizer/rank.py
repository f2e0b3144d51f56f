"""One rank of a zero_optimizer grade, started by quizapp/checking/launch.py: forked from the grade's
child (`serve`), or as `python rank.py --rank R ...` where CUDA is in use and forking is not safe.

Joins the process group and makes every run: 2 ranks make scenarios.RUNS on the default group; 4
ranks make scenarios.GROUP_RUNS, each half in a group of its own. A run builds the parameters,
constructs the learner's ShardedAdamW and takes its steps, each after zero_grad() and a backward of
this rank's own loss, and records to one JSON file what it saw after every step: the parameters,
state_numel(), the tensors reachable from the optimizer, the gradients zero_grad left, and every
torch.optim optimizer built during the run. The checks judge the records.

An error of the learner's code ends its run, which records it, and the next run starts. A
collective that failed (a peer gone, a timeout) ends the rank with an error file instead: the group
is then past saving.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import sys
import types
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

# How a collective that failed reads (gloo raises a plain RuntimeError with its source path in front).
PEER_TROUBLE = ("/gloo/", "timed out waiting", "connection closed by peer", "connection reset by peer",
                "broken pipe", "nccl error")
WALK_DEPTH = 12


def write_json(path: Path, payload: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, default=str), encoding="utf-8")
    os.replace(tmp, path)  # the launcher never reads half a file


def main(argv=None) -> None:
    """A spawned rank (CUDA, where forking is unsafe): a fresh interpreter that loads the solution itself."""
    parser = argparse.ArgumentParser()
    for name in ("--rank", "--world"):
        parser.add_argument(name, type=int, required=True)
    for name in ("--init", "--backend", "--device", "--solution", "--exercise-dir", "--out"):
        parser.add_argument(name, required=True)
    parser.add_argument("--collective-timeout", type=float, required=True)
    args = parser.parse_args(argv)
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        sys.path.pop(0)
    sys.dont_write_bytecode = True

    def load_solution():
        from quizapp.checking.loading import load_module

        return load_module("solution", Path(args.solution))

    status = serve(args.rank, args.world, args.init, args.backend, args.device, load_solution, args.solution,
                   Path(args.exercise_dir), Path(args.out), args.collective_timeout)
    os._exit(status)


def serve(rank: int, world: int, init: str, backend: str, device: str, load_solution, solution_path: str,
          exercise_dir: Path, out: Path, collective_timeout: float) -> int:
    """Join the group and make every run; the exit status for the rank's process."""
    try:
        run_all(rank, world, init, backend, device, load_solution, solution_path, exercise_dir, out,
                collective_timeout)
        status = 0
    except BaseException as exc:  # noqa: BLE001 - the launcher must hear about it, never a bare traceback
        from quizapp.checking.loading import describe_exception

        write_json(out / f"r{rank}-error.json", {"stage": "rank", "message": describe_exception(exc, solution_path)})
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return status


class CollectiveFailed(Exception):
    """A collective of the learner's failed: the peers are gone or out of step, so the rank stops."""


def run_all(rank, world, init, backend, device_name, load_solution, solution_path, exercise_dir: Path,
            out: Path, collective_timeout) -> None:
    from quizapp.checking.harness import sibling_module
    from quizapp.checking.loading import describe_load_error

    scn = sibling_module(str(exercise_dir / "rank.py"), "scenarios")
    torch.set_num_threads(1)
    try:
        dist.init_process_group(backend, init_method=init, rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=collective_timeout))
    except Exception as exc:  # noqa: BLE001 - e.g. the port was taken in the meantime: the launcher retries
        write_json(out / f"r{rank}-error.json", {"stage": "init", "message": f"{type(exc).__name__}: {exc}"})
        return
    device = torch.device(device_name)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if world == scn.GROUP_WORLD:
        groups = [dist.new_group(members) for members in scn.GROUPS]  # every rank makes every group, in order
        mine = next(i for i, members in enumerate(scn.GROUPS) if rank in members)
        place = dict(rank=scn.GROUPS[mine].index(rank), world_size=len(scn.GROUPS[mine]), group=groups[mine])
        runs, group_index = scn.GROUP_RUNS, mine + 1
    else:
        place = dict(rank=rank, world_size=world, group=None)
        runs, group_index = scn.RUNS, 0
    try:
        solution = load_solution()
    except BaseException as exc:  # noqa: BLE001 - imported fine in the grader, but not here
        write_json(out / f"r{rank}-error.json", {"stage": "import", "message": describe_load_error(exc, solution_path)})
        return
    for index, run in enumerate(runs):
        write_json(out / f"r{rank}-started.json", {"run": index})
        try:
            record = run_one(scn, solution, place, device, run, scn.seed_of(index, group_index), solution_path)
        except CollectiveFailed as exc:
            write_json(out / f"r{rank}-error.json", {"stage": "run", "run": index, "message": str(exc)})
            return
        write_json(out / f"r{rank}-{index}.json", record)


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


def learner_error(exc: BaseException, stage: str, solution_path: str) -> dict:
    from quizapp.checking.loading import describe_exception

    message = describe_exception(exc, solution_path)
    if isinstance(exc, dist.DistError) or any(sign in message.lower() for sign in PEER_TROUBLE):
        raise CollectiveFailed(f"in {stage}, a collective failed: {message}") from None
    return {"stage": stage, "message": message, "type": type(exc).__name__}


if __name__ == "__main__":
    main()
