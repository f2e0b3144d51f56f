"""One rank of a debug_ddp_sync_flag grade, started by quizapp/checking/launch.py: forked from the
grade's child (`serve`), or as `python rank.py --rank R ...` where CUDA is in use and forking is not safe.

Joins the process group, then makes two runs (RUNS): the fixed script's `train` and the learner's,
each on a fresh DDP model built from the fixed script's definitions with the same seed on every rank,
each rank with its own micro-batches. It records what the run did (forwards with DDP's sync flag,
DDP's all-reduces counted by a comm hook, collectives called by hand, optimizer steps and their
learning rates, nan_to_num calls, the parameters after each step, the returned losses) to one JSON
file per run. On the first error it writes an error file and exits: the other rank may be waiting
at a collective this one will never reach, so going on could only hang.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path

RUNS = ["fixed", "yours"]  # the fixed run first: a learner's run that fails still leaves it recorded
MODEL_SEED, DATA_SEED = 5, 7  # not the script's (0 and 1): the fix must hold on other draws too
ACCUM = 4
# torch.distributed functions a learner might call by hand to average or copy what DDP should sync
COLLECTIVES = ("all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "reduce", "reduce_scatter",
               "reduce_scatter_tensor", "all_reduce_coalesced", "broadcast_object_list", "all_gather_object",
               "scatter", "send", "recv", "isend", "irecv")


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
    # The exercise folder is not the learner's: keep its modules off the solution's import path.
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        sys.path.pop(0)
    sys.dont_write_bytecode = True

    def load_solution():
        from quizapp.checking.loading import load_module

        return load_module("solution", Path(args.solution))

    status = serve(args.rank, args.world, args.init, args.backend, args.device, load_solution, args.solution,
                   Path(args.exercise_dir), Path(args.out), args.collective_timeout)
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

    reference = sibling_module(str(exercise_dir / "rank.py"), "reference")
    torch.set_num_threads(1)  # the ranks share the machine's cores
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
    for index, run in enumerate(RUNS):
        write_json(out / f"r{rank}-started.json", {"run": index})
        module = reference if run == "fixed" else solution
        try:
            record = run_one(reference, module, rank, device)
        except BaseException as exc:  # noqa: BLE001 - the learner's error, reported against this run
            path = solution_path if run == "yours" else str(exercise_dir / "reference.py")
            write_json(out / f"r{rank}-error.json", {"stage": "run", "run": index,
                                                     "message": describe_exception(exc, path)})
            return
        write_json(out / f"r{rank}-{index}.json", record)


def run_one(reference, module, rank: int, device) -> dict:
    import torch
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
    from torch.nn.parallel import DistributedDataParallel

    from quizapp.checking import drill, instrument
    from quizapp.checking.harness import plain
    from quizapp.checking.instrument import LOG

    instrument.reset_torch_state()
    LOG.reset(device.type)
    torch.manual_seed(MODEL_SEED)  # every rank: the same initial weights
    model = reference.TinyRegressor().to(device)
    ddp = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)

    in_hook = [0]

    def counting_allreduce(state, bucket):
        # DDP calls this once per gradient bucket it all-reduces (one bucket for this model). Its own
        # dist.all_reduce inside is DDP's, not one called by hand: in_hook keeps it out of the count.
        LOG.add("allreduce")
        in_hook[0] += 1
        try:
            return allreduce_hook(None, bucket)
        finally:
            in_hook[0] -= 1

    ddp.register_comm_hook(None, counting_allreduce)
    forwards: list[dict] = []

    def on_forward(module_, inputs):
        # DDP decides at forward time whether the coming backward all-reduces: read its flag here.
        LOG.add("forward", sync=bool(module_.require_backward_grad_sync))

    def on_inner_forward(module_, inputs, output):
        # What ran, through DDP or around it (model.module(x)): the forwards drill.Trace counts.
        first = inputs[0] if inputs else None
        forwards.append({"n": int(first.shape[0]) if isinstance(first, torch.Tensor) and first.dim() else 0,
                         "training": module_.training, "autocast": instrument.autocast_on(),
                         "autocast_dtype": None, "out_dtype": None})
        LOG.add("inner_forward")

    ddp.register_forward_pre_hook(on_forward)
    model.register_forward_hook(on_inner_forward)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=reference.LR, momentum=reference.MOMENTUM)
    lrs: list[list[float]] = []
    # The lr each update used: read by a post-hook registered before the learner's code, after any
    # step pre-hook of theirs has changed it and before a post-hook of theirs can put it back.
    optimizer.register_step_post_hook(lambda *_: lrs.append([float(g["lr"]) for g in optimizer.param_groups]))
    instrument.watch_optimizer(optimizer)
    watched_step = optimizer.step
    step_params: list[list[float]] = []

    def step(*a, **kw):
        result = watched_step(*a, **kw)
        step_params.append(flat(model.parameters()))
        return result

    optimizer.step = step
    batches = reference.make_batches(DATA_SEED, rank, device)

    saved = {name: getattr(dist, name) for name in COLLECTIVES if hasattr(dist, name)}

    def counted(name, real):
        def call(*args, **kwargs):
            if not in_hook[0]:
                first = args[0] if args else None
                LOG.add("collective", name=name, dim=first.dim() if isinstance(first, torch.Tensor) else -1)
            return real(*args, **kwargs)

        return call

    for name, real in saved.items():
        setattr(dist, name, counted(name, real))
    try:
        with drill.counting_nan_to_num() as calls:
            returned = module.train(ddp, batches, optimizer, ACCUM)
    finally:
        for name, real in saved.items():
            setattr(dist, name, real)
    returned = plain(returned)
    named = list(model.named_parameters())
    return {
        "returned_type": type(returned).__name__,
        "losses": drill.as_losses(returned) if isinstance(returned, (list, tuple)) else None,
        "lrs": lrs,
        "forwards": forwards,
        "nan_to_num": calls[0],
        "names": [n for n, _ in named],
        "params": [p.detach().cpu().double().tolist() for _, p in named],
        "step_params": step_params,
        "events": [{"kind": e.kind, **{k: v for k, v in e.info.items() if k in ("sync", "name", "dim", "via_scaler")}}
                   for e in LOG.events if e.kind in ("forward", "inner_forward", "allreduce", "collective",
                                                     "opt.step", "backward", "zero_grad")],
    }


def flat(params) -> list[float]:
    import torch

    return torch.cat([p.detach().reshape(-1).double().cpu() for p in params]).tolist()


if __name__ == "__main__":
    main()
