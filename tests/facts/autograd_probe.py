"""What autograd saves for backward, seen through saved-tensor hooks (used by the fact tests)."""

from __future__ import annotations

import torch
from torch import nn


def saved_tensors(fn, *args) -> list[torch.Tensor]:
    """The tensors autograd saves while running fn(*args), in the order it saves them."""
    saved: list[torch.Tensor] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(*args)
    return saved


def activation_bytes(model: nn.Module, x: torch.Tensor) -> int:
    """Bytes of the distinct non-parameter tensors saved for backward (shared storage counted once)."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    storages: dict[int, int] = {}
    for t in saved_tensors(model, x):
        storage = t.untyped_storage()
        if storage.data_ptr() not in params:
            storages[storage.data_ptr()] = storage.nbytes()
    return sum(storages.values())


def leaf(*shape: int, seed: int = 0, grad: bool = True) -> torch.Tensor:
    """A seeded standard-normal leaf tensor, requiring grad unless told otherwise."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).requires_grad_(grad)
