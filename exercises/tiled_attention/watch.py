"""tiled_attention: what one call of the solution does, seen from inside torch. A TorchDispatchMode
records the element count of every tensor an op returns (the memory bound), every op whose name
names an attention kernel, and which of q, k, v some op read; a TorchFunctionMode sees
F.scaled_dot_product_attention itself, which may take its math path, whose ops the dispatch mode sees
without an attention kernel's name. Ops that run inside such a call are that check's finding, not
counted against the memory bound. Loaded by path
(sibling_module), never imported by name."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import torch
import torch._dynamo  # noqa: F401 - a dispatch mode imports it on first use (2 s): at import, where a warm grader pays once
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

KERNEL_WORDS = ("scaled_dot_product", "flash_attention", "efficient_attention")


@dataclass
class Record:
    largest: int = 0  # elements of the largest tensor an op returned
    largest_op: str = ""
    largest_shape: tuple = ()
    kernels: list[str] = field(default_factory=list)  # attention kernels called, in order
    read: set[str] = field(default_factory=set)  # which of "q", "k", "v" some op took as an input
    ops: int = 0


def storage_of(t: torch.Tensor) -> int | None:
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError, TypeError):
        return None


def is_kernel(name: str) -> bool:
    return any(word in name for word in KERNEL_WORDS)


class _State:
    inside_kernel = 0


class _Ops(TorchDispatchMode):
    def __init__(self, record: Record, storages: dict, state: _State):
        super().__init__()
        self.record, self.storages, self.state = record, storages, state

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        record, name = self.record, str(func)
        record.ops += 1
        if is_kernel(name):
            record.kernels.append(name)
        for t in tree_leaves((args, kwargs)):
            if isinstance(t, torch.Tensor):
                which = self.storages.get(storage_of(t))
                if which:
                    record.read.add(which)
        out = func(*args, **kwargs)
        if not self.state.inside_kernel:
            for t in tree_leaves(out):
                if isinstance(t, torch.Tensor) and t.numel() > record.largest:
                    record.largest, record.largest_op, record.largest_shape = t.numel(), name, tuple(t.shape)
        return out


class _Functions(TorchFunctionMode):
    def __init__(self, record: Record, state: _State):
        super().__init__()
        self.record, self.state = record, state

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", None) or str(func)
        hit = is_kernel(str(name))
        if hit:
            self.record.kernels.append(str(name))
            self.state.inside_kernel += 1
        try:
            return func(*args, **kwargs)
        finally:
            if hit:
                self.state.inside_kernel -= 1


@contextlib.contextmanager
def watching(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
    """Yield a Record filled while the block runs."""
    record, state = Record(), _State()
    storages = {storage_of(t): name for name, t in (("q", q), ("k", k), ("v", v))}
    storages.pop(None, None)
    with _Functions(record, state), _Ops(record, storages, state):
        yield record
