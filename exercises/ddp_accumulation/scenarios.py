"""ddp_accumulation: the runs every rank makes and the child replays in one process.

Shared by ranks.py (each rank) and checks.py (the single-process truth), so both build the same
model, data and optimizer from the same seeds. Loaded by path, never imported by name.
"""

from __future__ import annotations

import torch

IN, HIDDEN, OUT = 6, 12, 3
WORLD = 2
CLIP = 0.05  # below every group's gradient norm in the clip run, so every step is clipped

# name -> (each rank's micro-batch sizes, accum_steps); every rank gets the same sizes
SCENARIOS = {
    "divisible": ([4] * 6, 3),               # 2 groups of 3
    "trailing": ([4] * 7, 3),                # 3 + 3 + 1: the trailing group must be stepped
    "short-last": ([8, 8, 8, 8, 8, 2], 4),   # groups of 32 and 10 samples per rank
}
OPTIMIZERS = ("SGD-momentum", "AdamW")

# Every rank makes these runs in this order, in one launch. The clip run is last: a solution that
# breaks only with max_grad_norm still has every other run recorded.
RUNS = [(name, opt, None) for name in SCENARIOS for opt in OPTIMIZERS] + [("trailing", "SGD-momentum", CLIP)]


def run_key(run) -> str:
    name, opt, clip = run
    return f"{name}/{opt}" + (f"/clip={clip}" if clip is not None else "")


def build_model(device, seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.Tanh(),
                               torch.nn.Linear(HIDDEN, OUT)).to(device)


def build_optimizer(params, opt_name: str) -> torch.optim.Optimizer:
    if opt_name == "SGD-momentum":
        return torch.optim.SGD(params, lr=0.1, momentum=0.9)
    return torch.optim.AdamW(params, lr=0.01, weight_decay=0.1)


def rank_loaders(sizes, device, seed: int = 1) -> list[list[tuple[torch.Tensor, torch.Tensor]]]:
    """Every rank's micro-batches: loaders[rank][i] = (inputs, targets), drawn from one stream."""
    g = torch.Generator().manual_seed(seed)
    total = WORLD * sum(sizes)
    x = torch.randn(total, IN, generator=g)
    y = torch.sin(x @ torch.randn(IN, OUT, generator=g))
    loaders, start = [], 0
    for _ in range(WORLD):
        batches = []
        for n in sizes:
            batches.append((x[start:start + n].to(device), y[start:start + n].to(device)))
            start += n
        loaders.append(batches)
    return loaders


def groups(sizes, k) -> list[list[int]]:
    """Indices of the micro-batches of each group: consecutive runs of k, the last maybe shorter."""
    return [list(range(i, min(i + k, len(sizes)))) for i in range(0, len(sizes), k)]


def flat(tensors) -> torch.Tensor:
    return torch.cat([t.detach().reshape(-1).float().cpu() for t in tensors])
