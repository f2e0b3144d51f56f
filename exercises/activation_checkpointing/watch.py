"""Watch activation checkpointing from outside: which blocks run inside which checkpoint region,
which regions took the reentrant path, what each block recomputes in backward, and how many bytes
of activations autograd keeps between forward and backward."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import torch
import torch.utils.checkpoint as cp


@dataclass
class Region:
    index: int
    reentrant: bool
    blocks: list = field(default_factory=list)  # blocks whose forward ran inside it, in forward


@dataclass
class Watch:
    regions: list = field(default_factory=list)
    outside: list = field(default_factory=list)  # blocks that ran in forward outside any region
    forward_calls: dict = field(default_factory=dict)  # block -> calls during forward
    recomputed: dict = field(default_factory=dict)  # block -> calls during backward
    kept_bytes: int = 0
    in_backward: bool = False
    _stack: list = field(default_factory=list)

    def open(self, reentrant: bool) -> Region:
        region = Region(len(self.regions), reentrant)
        self.regions.append(region)
        return region

    def boundaries(self) -> list[list[int]]:
        return [r.blocks for r in self.regions if r.blocks]


def _recompute_inside(watch: Watch, region: Region, fn):
    """fn as called for recomputation in backward: the region is on the stack while it runs."""
    def run(*args, **kwargs):
        watch._stack.append(region)
        try:
            return fn(*args, **kwargs)
        finally:
            watch._stack.pop()

    return run


@contextlib.contextmanager
def checkpoint_regions(watch: Watch):
    """Route every checkpoint call through recording shims. `checkpoint` looks both paths up as
    module globals at call time, so this sees calls however the solution imported `checkpoint`."""
    real_gen = getattr(cp, "_checkpoint_without_reentrant_generator", None)
    real_function = getattr(cp, "CheckpointFunction", None)

    def generator(fn, *args, **kwargs):
        region = watch.open(reentrant=False)
        watch._stack.append(region)
        try:
            yield from real_gen(_recompute_inside(watch, region, fn), *args, **kwargs)
        finally:
            with contextlib.suppress(ValueError):
                watch._stack.remove(region)

    class Reentrant:
        @staticmethod
        def apply(function, preserve, *args):
            region = watch.open(reentrant=True)
            watch._stack.append(region)
            try:
                return real_function.apply(_recompute_inside(watch, region, function), preserve, *args)
            finally:
                with contextlib.suppress(ValueError):
                    watch._stack.remove(region)

    if real_gen is not None:
        cp._checkpoint_without_reentrant_generator = generator
    if real_function is not None:
        cp.CheckpointFunction = Reentrant
    try:
        # Early stop ends a recomputation as soon as the last saved tensor is back, which may be
        # before the last block's forward hook fires: off, so each recomputed block is seen.
        with cp.set_checkpoint_early_stop(False):
            yield watch
    finally:
        if real_gen is not None:
            cp._checkpoint_without_reentrant_generator = real_gen
        if real_function is not None:
            cp.CheckpointFunction = real_function


@contextlib.contextmanager
def block_hooks(watch: Watch, blocks):
    def hook_for(index):
        def hook(module, inputs, output):
            if watch.in_backward:
                watch.recomputed[index] = watch.recomputed.get(index, 0) + 1
                return
            watch.forward_calls[index] = watch.forward_calls.get(index, 0) + 1
            if watch._stack:
                watch._stack[-1].blocks.append(index)
            else:
                watch.outside.append(index)
        return hook

    handles = [block.register_forward_hook(hook_for(i)) for i, block in enumerate(blocks)]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@contextlib.contextmanager
def kept_activations(watch: Watch, params):
    """Count the bytes autograd keeps for backward, parameters excluded, each storage once. Inside a
    non-reentrant checkpoint region the checkpoint's own hooks take over and keep nothing, so what
    is counted is what really stays alive between forward and backward."""
    param_storages = {p.untyped_storage().data_ptr() for p in params}
    seen: set = set()

    def pack(t):
        storage = t.untyped_storage()
        ptr = storage.data_ptr()
        if ptr not in param_storages and ptr not in seen and storage.nbytes():
            seen.add(ptr)
            watch.kept_bytes += storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        yield
