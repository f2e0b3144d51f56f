"""The rank side of a multi-rank exercise (tensor_parallel, zero_optimizer): what every rank does
around the exercise's own runs. `launch.py` is the other side.

A rank joins the process group, makes the exercise's groups when it is one of GROUP_WORLD ranks,
loads the solution and makes every run, writing the files the launcher reads: `r{rank}-started.json`
as a run starts, `r{rank}-{index}.json` with its record, `r{rank}-error.json` on the first error
that ends the rank. What a run does and records is the exercise's (`make_record`); the runs and the
groups come from its `scenarios.py`, kept beside its `rank.py`:

    WORLD, GROUP_WORLD, GROUPS    the two launches' sizes, and the 4-rank launch's groups
    GROUP_RUNS                    the runs each group makes
    seed_of(index, group_index)   a run's seed (group_index 0 on the default group)

An error of the learner's code ends its run, which records it, and the next run starts: such errors
(a shape, a missing bias) come alike on every rank. A collective that failed (a peer gone, a
timeout) ends the rank with an error file instead: the group is then past saving.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

# How a collective that failed reads (gloo raises a plain RuntimeError with its source path in front).
PEER_TROUBLE = ("/gloo/", "timed out waiting", "connection closed by peer", "connection reset by peer",
                "broken pipe", "nccl error")

# make_record(scn, solution, place, device, index, run, seed, solution_path) -> the run's record
MakeRecord = Callable[..., dict]


class CollectiveFailed(Exception):
    """A collective of the learner's failed: the peers are gone or out of step, so the rank stops."""


def write_json(path: Path, payload: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, default=str), encoding="utf-8")
    os.replace(tmp, path)  # the launcher never reads half a file


def spawned_main(rank_file: str, serve: Callable[..., int], argv=None) -> None:
    """A spawned rank (CUDA, where forking is unsafe): a fresh interpreter that loads the solution
    itself, then ends without teardown (destroy_process_group would wait on a peer that may be gone)."""
    parser = argparse.ArgumentParser()
    for name in ("--rank", "--world"):
        parser.add_argument(name, type=int, required=True)
    for name in ("--init", "--backend", "--device", "--solution", "--exercise-dir", "--out"):
        parser.add_argument(name, required=True)
    parser.add_argument("--collective-timeout", type=float, required=True)
    args = parser.parse_args(argv)
    # The exercise folder is not the learner's: keep its modules off the solution's import path.
    if sys.path and Path(sys.path[0]).resolve() == Path(rank_file).resolve().parent:
        sys.path.pop(0)
    sys.dont_write_bytecode = True

    def load_solution():
        from quizapp.checking.loading import load_module

        return load_module("solution", Path(args.solution))

    status = serve(args.rank, args.world, args.init, args.backend, args.device, load_solution, args.solution,
                   Path(args.exercise_dir), Path(args.out), args.collective_timeout)
    os._exit(status)


def serve(rank: int, world: int, init: str, backend: str, device: str, load_solution, solution_path: str,
          exercise_dir: Path, out: Path, collective_timeout: float, *, make_record: MakeRecord,
          default_runs: str = "RUNS") -> int:
    """Join the group and make every run; the exit status for the rank's process. On the default
    group the runs are `scenarios.<default_runs>`."""
    try:
        _run_all(rank, world, init, backend, device, load_solution, solution_path, exercise_dir, out,
                 collective_timeout, make_record, default_runs)
        status = 0
    except BaseException as exc:  # noqa: BLE001 - the launcher must hear about it, never a bare traceback
        from quizapp.checking.loading import describe_exception

        write_json(out / f"r{rank}-error.json", {"stage": "rank", "message": describe_exception(exc, solution_path)})
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return status


def _run_all(rank, world, init, backend, device_name, load_solution, solution_path, exercise_dir: Path,
             out: Path, collective_timeout, make_record: MakeRecord, default_runs: str) -> None:
    import torch
    import torch.distributed as dist

    from quizapp.checking.harness import sibling_module
    from quizapp.checking.loading import describe_load_error

    scn = sibling_module(str(exercise_dir / "rank.py"), "scenarios")
    # The ranks share the machine's cores: one intra-op thread each keeps them from fighting over them.
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
        runs, group_index = getattr(scn, default_runs), 0
    try:
        solution = load_solution()
    except BaseException as exc:  # noqa: BLE001 - imported fine in the grader, but not here
        write_json(out / f"r{rank}-error.json", {"stage": "import", "message": describe_load_error(exc, solution_path)})
        return
    for index, run in enumerate(runs):
        write_json(out / f"r{rank}-started.json", {"run": index})
        try:
            record = make_record(scn, solution, place, device, index, run, scn.seed_of(index, group_index),
                                 solution_path)
        except CollectiveFailed as exc:
            write_json(out / f"r{rank}-error.json", {"stage": "run", "run": index, "message": str(exc)})
            return
        write_json(out / f"r{rank}-{index}.json", record)
    _leave_together(rank, world, collective_timeout)


def _leave_together(rank: int, world: int, timeout: float) -> None:
    """Wait, through the store, until every rank has made its runs, then end together. Rank 0 hosts the
    store: a rank 0 that ended first would cut off peers still at work (slower on a busy machine) with
    "connection closed by peer", and the launcher stops whoever is still running a few seconds after
    the first rank ends. No collective: the learner's code may have left the groups in any state."""
    import datetime

    import torch.distributed as dist

    try:
        store = dist.distributed_c10d._get_default_store()
        store.set(f"quizapp-done-{rank}", "1")
        store.wait([f"quizapp-done-{r}" for r in range(world)], datetime.timedelta(seconds=timeout))
    except Exception:  # noqa: BLE001 - a peer is gone: its own error says why; this rank's records are written
        pass


def learner_error(exc: BaseException, stage: str, solution_path: str) -> dict:
    """The learner's error in `stage` as a run's record holds it; CollectiveFailed instead when it is
    a collective that failed, which ends the rank."""
    import torch.distributed as dist

    from quizapp.checking.loading import describe_exception

    message = describe_exception(exc, solution_path)
    if isinstance(exc, dist.DistError) or any(sign in message.lower() for sign in PEER_TROUBLE):
        raise CollectiveFailed(f"in {stage}, a collective failed: {message}") from None
    return {"stage": stage, "message": message, "type": type(exc).__name__}
