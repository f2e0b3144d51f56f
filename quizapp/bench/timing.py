"""Clocks for the bench.

A GPU runs what the CPU queues, later: a host clock read after a call measures how fast Python queued
the work, not how long the GPU took. So on CUDA every mark is an event recorded in the stream, and the
times are read after a synchronize. The loop under test is the learner's own function, which runs all
of its steps in one call; the loader it is given records a mark each time the loop asks for the next
batch, so the stream holds one event between every two steps: step i's time is the distance between
the marks around it, the call's own start-up (a GradScaler made, model.train()) stays outside, and a
loop that waits on the GPU (`loss.item()`) is charged for the GPU's idle time that causes.

Before each timed run the L2 cache is flushed (a buffer larger than it is written), as kernel
leaderboards do, so no run starts with the last one's data in the cache.
"""

from __future__ import annotations

import time
import warnings

import torch

FLUSH_BYTES = 256 * 1024 * 1024  # at least this; more when the GPU's L2 is larger than a quarter of it


class Clock:
    """Marks on the host's clock (the CPU: work is done when the call returns)."""

    kind = "host clock (time.perf_counter)"

    def __init__(self):
        self.marks: list = []

    def reset(self) -> None:
        self.marks = []

    def mark(self) -> None:
        self.marks.append(time.perf_counter())

    def intervals(self) -> list[float]:
        """Seconds between consecutive marks."""
        return [b - a for a, b in zip(self.marks, self.marks[1:])]

    def sync(self) -> None:
        pass

    def flush(self) -> None:
        pass

    def now(self) -> float:
        """Seconds on a clock that counts finished work: the host's, after a synchronize on CUDA."""
        self.sync()
        return time.perf_counter()


class CudaClock(Clock):
    """Marks as CUDA events in the current stream; read after a synchronize."""

    kind = "CUDA events (torch.cuda.Event), read after torch.cuda.synchronize()"

    def __init__(self, device: torch.device):
        super().__init__()
        self.device = device
        l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or 0
        self.flush_bytes = max(FLUSH_BYTES, 4 * l2)
        self._flush = torch.empty(self.flush_bytes // 4, dtype=torch.float32, device=device)

    def mark(self) -> None:
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        self.marks.append(event)

    def intervals(self) -> list[float]:
        torch.cuda.synchronize(self.device)
        return [a.elapsed_time(b) / 1e3 for a, b in zip(self.marks, self.marks[1:])]

    def sync(self) -> None:
        torch.cuda.synchronize(self.device)

    def flush(self) -> None:
        self._flush.zero_()


def clock_for(device: torch.device) -> Clock:
    return CudaClock(device) if device.type == "cuda" else Clock()


class MarkedLoader:
    """A re-iterable loader of `steps` copies of one batch that marks the clock whenever the loop asks
    for a batch, and once more when it asks past the last one: `steps + 1` marks around `steps` steps."""

    def __init__(self, batch, steps: int, clock: Clock | None = None):
        self.batch = batch
        self.steps = steps
        self.clock = clock

    def __len__(self) -> int:
        return self.steps

    def __iter__(self):
        for _ in range(self.steps):
            if self.clock is not None:
                self.clock.mark()
            yield self.batch
        if self.clock is not None:
            self.clock.mark()


def count_syncs(fn) -> int:
    """How many times `fn()` made the host wait for the GPU, by CUDA's sync debug mode ("warn" mode
    reports each synchronizing call: `.item()`, `.cpu()`, a GradScaler's inf check, ...)."""
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            fn()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return sum(1 for w in seen if "synchroniz" in str(w.message))


def cuda_startup(device: torch.device) -> dict:
    """The first CUDA calls' cost, paid once per process and kept out of every timing: the context
    (driver, memory pools), then the first cuBLAS call (its handle and workspace)."""
    t0 = time.perf_counter()
    torch.cuda.init()
    torch.empty(1, device=device)
    torch.cuda.synchronize(device)
    t1 = time.perf_counter()
    a = torch.randn(64, 64, device=device)
    (a @ a).sum().item()
    t2 = time.perf_counter()
    return {"context_s": t1 - t0, "first_matmul_s": t2 - t1}


def matmul_ceiling(device: torch.device, dtype: torch.dtype, n: int = 8192, reps: int = 10) -> float:
    """TFLOP/s of an n×n×n matmul on random data in `dtype`, the median of `reps` after a warm-up, timed
    with CUDA events, the L2 flushed before each: what this GPU reaches in practice on the bench's ops."""
    clock = CudaClock(device)
    g = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(n, n, device=device, dtype=dtype, generator=g)
    b = torch.randn(n, n, device=device, dtype=dtype, generator=g)
    for _ in range(3):
        a @ b
    times = []
    for _ in range(reps):
        clock.flush()
        clock.reset()
        clock.mark()
        a @ b
        clock.mark()
        times.extend(clock.intervals())
    times.sort()
    median = times[len(times) // 2]
    del a, b, clock
    torch.cuda.empty_cache()
    return 2 * n ** 3 / median / 1e12
