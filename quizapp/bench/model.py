"""The bench model: a stack of wide Linear + GELU blocks, the shape tensor cores are built for (every
matmul's sides multiples of 64), trained with AdamW on an MSE loss. Its batch is staged on the device
before timing, so the bench times the step, not the copy from host memory (a real input pipeline
overlaps that copy with compute: pinned memory, non_blocking, loader workers)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from quizapp.bench.flops import linear_stack_step_flops

GPU_WIDTH, GPU_DEPTH = 4096, 8
CPU_WIDTH, CPU_DEPTH, CPU_BATCH = 64, 2, 32
BATCH_CAP = 16384  # rows; past this a float32 step only gets longer, not more telling
BATCH_FLOOR = 256
MEMORY_SHARE = 0.3  # the float32 run's estimated peak may take this share of the GPU's memory
STATE_BYTES_PER_PARAM = 16  # float32 weights, gradients and AdamW's two moments


@dataclass(frozen=True)
class Shape:
    width: int
    depth: int
    batch: int

    @property
    def params(self) -> int:
        return self.depth * (self.width * self.width + self.width)

    @property
    def step_flops(self) -> int:
        return linear_stack_step_flops(self.batch, [(self.width, self.width)] * self.depth)

    @property
    def state_bytes(self) -> int:
        return STATE_BYTES_PER_PARAM * self.params

    def describe(self) -> str:
        from quizapp.bench.table import si

        return (f"{self.depth} x [Linear({self.width}->{self.width}) + GELU], batch {self.batch:,}, "
                f"{si(self.params)} parameters, AdamW, MSE loss")

    def to_json(self) -> dict:
        return {**asdict(self), "params": self.params, "step_flops": self.step_flops, "state_bytes": self.state_bytes}


def estimate_fp32_peak_bytes(width: int, depth: int, batch: int) -> int:
    """A float32 step's peak, roughly: the model state, the batch (inputs and targets), and per layer
    the two activations kept for backward (the Linear's input, the GELU's input), with room for the
    backward's transients."""
    state = STATE_BYTES_PER_PARAM * depth * width * (width + 1)
    row = 4 * width * batch
    return state + 2 * row + int(2.5 * depth * row)


def auto_batch(width: int, depth: int, total_memory: int, *, share: float = MEMORY_SHARE,
               cap: int = BATCH_CAP, floor: int = BATCH_FLOOR) -> int:
    """The largest power of two of rows, at most `cap`, whose float32 step fits in `share` of the GPU's
    memory by estimate_fp32_peak_bytes; `floor` at least."""
    batch = floor
    while batch * 2 <= cap and estimate_fp32_peak_bytes(width, depth, batch * 2) <= share * total_memory:
        batch *= 2
    return batch


def build(shape: Shape, device: torch.device, seed: int = 0):
    """(model, optimizer, (inputs, targets), loss_fn): the same numbers for every configuration."""
    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    for _ in range(shape.depth):
        layers += [nn.Linear(shape.width, shape.width), nn.GELU()]
    model = nn.Sequential(*layers).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator(device=device).manual_seed(seed + 1)
    inputs = torch.randn(shape.batch, shape.width, generator=g, device=device)
    targets = 0.1 * torch.randn(shape.batch, shape.width, generator=g, device=device)
    return model, optimizer, (inputs, targets), F.mse_loss
