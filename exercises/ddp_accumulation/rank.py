"""One rank of a ddp_accumulation grade, started by launch.py: forked from the grade's child
(`serve`), or as `python rank.py --rank R ...` where CUDA is in use and forking is not safe.

Joins the process group, then makes every run of scenarios.RUNS with the learner's
`train_ddp_accumulation` on a DistributedDataParallel model, and writes what it saw (forwards with
DDP's sync flag, all-reduces counted by a comm hook, backward/clip/step order, the gradients each
step used and the parameters after it, the return value) to one JSON file per run. On the first
error it writes an error file and exits: the other rank may be waiting at a collective this one
will never reach, so going on could only hang.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path


def write_json(path: Path, payload: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, default=str), encoding="utf-8")
    os.replace(tmp, path)  # the launcher never reads half a file


def main(argv=None) -> None:
    """A spawned rank (CUDA, where forking is unsafe): a fresh interpreter that loads the solution itself."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--init", required=True)
    parser.add_argument("--backend", required=True)
    parser.add_argument("--device", required=True)
    parser.add_argument("--solution", required=True)
    parser.add_argument("--exercise-dir", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--collective-timeout", type=float, required=True)
    args = parser.parse_args(argv)
    # The exercise folder is not the learner's: keep its modules off the solution's import path.
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        sys.path.pop(0)
    sys.dont_write_bytecode = True
    out = Path(args.out)

    def load_solution():
        from quizapp.checking.loading import load_module

        return load_module("solution", Path(args.solution))

    status = serve(args.rank, args.world, args.init, args.backend, args.device, load_solution, args.solution,
                   Path(args.exercise_dir), out, args.collective_timeout)
    # No teardown: destroy_process_group would wait on a peer that may be gone or stuck.
    os._exit(status)


def serve(rank: int, world: int, init: str, backend: str, device: str, load_solution, solution_path: str,
          exercise_dir: Path, out: Path, collective_timeout: float) -> int:
    """Join the group and make every run; the exit status for the rank's process."""
    try:
        run_all(rank, world, init, backend, device, load_solution, solution_path, exercise_dir, out,
                collective_timeout)
        status = 0
    except BaseException as exc:  # noqa: BLE001 - the launcher must hear about it, never a bare traceback
        write_json(out / f"r{rank}-error.json", {"stage": "rank", "message": f"{type(exc).__name__}: {exc}"})
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return status


def run_all(rank, world, init, backend, device_name, load_solution, solution_path, exercise_dir: Path,
            out: Path, collective_timeout) -> None:
    import torch
    import torch.distributed as dist

    from quizapp.checking import instrument
    from quizapp.checking.harness import sibling_module
    from quizapp.checking.loading import describe_exception, describe_load_error

    scn = sibling_module(str(exercise_dir / "rank.py"), "scenarios")
    # The ranks share the machine's cores: one intra-op thread each keeps them from fighting over them
    # (and a forked rank never enters an OpenMP region its parent's thread pool was set up for).
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
    instrument.install()
    try:
        solution = load_solution()
    except BaseException as exc:  # noqa: BLE001 - imported fine in the grader, but not here
        write_json(out / f"r{rank}-error.json", {"stage": "import", "message": describe_load_error(exc, solution_path)})
        return
    for index, run in enumerate(scn.RUNS):
        write_json(out / f"r{rank}-started.json", {"run": index})
        try:
            record = run_one(scn, solution, rank, device, run)
        except BaseException as exc:  # noqa: BLE001 - the learner's error, reported against this run
            write_json(out / f"r{rank}-error.json", {"stage": "run", "run": index,
                                                     "message": describe_exception(exc, solution_path)})
            return
        write_json(out / f"r{rank}-{index}.json", record)


def run_one(scn, solution, rank: int, device, run) -> dict:
    import torch
    import torch.nn.functional as F
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
    from torch.nn.parallel import DistributedDataParallel

    from quizapp.checking import instrument
    from quizapp.checking.instrument import LOG

    name, opt_name, clip = run
    sizes, k = scn.SCENARIOS[name]
    instrument.reset_torch_state()
    LOG.reset(device.type)
    model = scn.build_model(device)
    ddp = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)

    def counting_allreduce(state, bucket):
        # DDP calls this once per gradient bucket it all-reduces: the traffic no_sync is there to save.
        buffer = bucket.buffer()
        LOG.add("allreduce", bytes=buffer.numel() * buffer.element_size())
        return allreduce_hook(None, bucket)

    ddp.register_comm_hook(None, counting_allreduce)

    def on_forward(module, inputs):
        # DDP decides at forward time whether the coming backward all-reduces: read its flag here.
        n = int(inputs[0].shape[0]) if inputs and isinstance(inputs[0], torch.Tensor) else -1
        LOG.add("forward", n=n, sync=bool(module.require_backward_grad_sync))

    def on_inner_forward(module, inputs):
        LOG.add("inner_forward")

    ddp.register_forward_pre_hook(on_forward)
    model.register_forward_pre_hook(on_inner_forward)

    optimizer = scn.build_optimizer(ddp.parameters(), opt_name)
    step_grads, step_params = [], []

    def before_step():
        # After an optimizer.step(closure)'s closure has run: the gradients this step will use.
        grads = [p.grad for p in model.parameters()]
        step_grads.append(None if any(g is None for g in grads) else scn.flat(grads).tolist())

    instrument.watch_optimizer(optimizer, before_step=before_step)
    watched_step = optimizer.step

    def step(*a, **kw):
        result = watched_step(*a, **kw)
        step_params.append(scn.flat(model.parameters()).tolist())
        return result

    optimizer.step = step
    LOG.watched_params = list(model.parameters())
    loader = scn.rank_loaders(sizes, device)[rank]
    returned = solution.train_ddp_accumulation(ddp, loader, optimizer, F.mse_loss, k, max_grad_norm=clip)
    left = [p.grad for p in model.parameters() if p.grad is not None and bool(p.grad.any())]
    events = [{"kind": e.kind, **{key: value for key, value in e.info.items() if key != "params"}}
              for e in LOG.events]
    return {
        "events": events,
        "step_grads": step_grads,
        "step_params": step_params,
        # What .grad still held when the function returned: nothing, if each step was followed by a zeroing.
        "grads_left": {"count": len(left), "largest": max((g.abs().max().item() for g in left), default=0.0)},
        "returned": {"type": type(returned).__name__, "repr": _short_repr(returned),
                     "value": returned if type(returned) is int else None},
    }


def _short_repr(value) -> str:
    try:
        text = repr(value)
    except BaseException:  # noqa: BLE001 - a learner's object whose repr fails
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 120 else text[:117] + "..."


if __name__ == "__main__":
    main()
