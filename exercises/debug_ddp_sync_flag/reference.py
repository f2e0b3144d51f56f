# quizapp: exercise=debug_ddp_sync_flag
"""The fixed script for the drill debug_ddp_sync_flag: DDP's sync flag is set before the forward pass.

Run it:    python debug_ddp_sync_flag.py   (starts 2 ranks on the CPU, gloo back-end)
Grade it:  quizapp grade debug_ddp_sync_flag.py   (the grader calls train() on its own DDP model and data)

A small regressor trained with DistributedDataParallel and gradient accumulation: each rank runs
ACCUM micro-batches of its own data, and only the last micro-batch of each step is meant to
all-reduce the accumulated gradient. After training, the two ranks' weights are compared and each
rank measures its loss on the same held-out batch. Rebuilt small from a real report:
karpathy/build-nanogpt#30, "fix sync issue that results in incorrect gradient accumulation and
incorrect loss".
"""

import os
import sys
import tempfile

import torch
import torch._dynamo  # noqa: F401 - DDP imports it when built: once here, before the ranks fork
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

WORLD = 2
IN, HIDDEN = 8, 16
STEPS, ACCUM, MICRO = 8, 4, 8  # 8 optimizer steps, each over 4 micro-batches of 8 samples per rank
LR, MOMENTUM = 0.1, 0.9


class TinyRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(IN, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, 1))

    def forward(self, x):
        return self.net(x)


def make_batches(seed, rank, device="cpu"):
    """This rank's STEPS * ACCUM micro-batches of one regression task. Each rank reads its own shard,
    and the shards are not alike (rank 0's inputs sit to one side of the origin, rank 1's to the other)."""
    task = torch.Generator().manual_seed(seed)
    w = torch.randn(IN, 1, generator=task)
    g = torch.Generator().manual_seed(seed * 100 + rank + 1)
    shift = 0.75 if rank == 0 else -0.75
    batches = []
    for _ in range(STEPS * ACCUM):
        x = torch.randn(MICRO, IN, generator=g) + shift
        y = torch.sin(x @ w) + 0.1 * torch.randn(MICRO, 1, generator=g)
        batches.append((x.to(device), y.to(device)))
    return batches


def make_eval_batch(seed, device="cpu"):
    """One held-out batch drawn from both shards, the same on every rank."""
    both = [make_batches(seed, r)[0] for r in range(WORLD)]
    return torch.cat([x for x, _ in both]).to(device), torch.cat([y for _, y in both]).to(device)


def train(model, batches, optimizer, accum_steps):
    """One optimizer step per `accum_steps` micro-batches; `model` is wrapped in DDP.

    Returns this rank's loss of every step (the mean over its micro-batches)."""
    model.train()
    losses = []
    for start in range(0, len(batches), accum_steps):
        optimizer.zero_grad()
        loss_accum = 0.0
        for micro_step in range(accum_steps):
            x, y = batches[start + micro_step]
            # The fix: DDP reads require_backward_grad_sync in forward(), where it decides whether the
            # coming backward all-reduces. Set after the forward, the flag was read one micro-step late:
            # the all-reduce followed each step's first micro-batch (the flag left True by the step
            # before) and the other three micro-batches' gradients stayed on their own rank.
            model.require_backward_grad_sync = micro_step == accum_steps - 1
            loss = F.mse_loss(model(x), y) / accum_steps
            loss_accum += loss.item()
            loss.backward()
        optimizer.step()
        losses.append(loss_accum)
    return losses


def worker(rank, init_file, log):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=WORLD)
    torch.manual_seed(0)  # the same initial weights on every rank (DDP also broadcasts rank 0's)
    model = DDP(TinyRegressor())
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    losses = train(model, make_batches(seed=1, rank=rank), optimizer, ACCUM)

    x, y = make_eval_batch(seed=2)
    with torch.no_grad():
        eval_loss = F.mse_loss(model(x), y).item()
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    everyone = [torch.zeros_like(flat) for _ in range(WORLD)]
    dist.all_gather(everyone, flat)
    reports = [None] * WORLD
    dist.all_gather_object(reports, (losses, eval_loss))
    if rank == 0:  # rank 0 writes the log; the parent prints it
        lines = [f"step {step}  loss rank 0 {reports[0][0][step]:.4f}  rank 1 {reports[1][0][step]:.4f}"
                 for step in range(len(losses))]
        diff = (everyone[0] - everyone[1]).abs().max().item()
        lines.append(f"after {len(losses)} steps the two ranks' weights differ by {diff:.3e} (largest entry)")
        lines.append(f"loss on the same held-out batch: rank 0 {reports[0][1]:.4f}, rank 1 {reports[1][1]:.4f}")
        log.put(lines)
    dist.barrier()
    dist.destroy_process_group()


def main():
    # On Linux, fork starts the ranks without importing torch again; elsewhere each rank is a fresh process.
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    log = mp.get_context(method).SimpleQueue()
    with tempfile.TemporaryDirectory() as tmp:
        mp.start_processes(worker, args=(os.path.join(tmp, "init"), log), nprocs=WORLD, start_method=method)
    for line in log.get():
        print(line)


if __name__ == "__main__":
    main()
