"""A pytest plugin (`-p cuda_only`, with benchmarks/gpu on PYTHONPATH): keep only the tests that are
skipped without a GPU, i.e. whose `skipif` marker (their own or their module's `pytestmark`) gives a
reason that names CUDA or a GPU. So `pytest -p cuda_only tests/cuda tests/facts` runs every CUDA test
of tests/cuda and the CUDA-gated fact tests of tests/facts, and nothing that the CPU CI runs anyway."""

from __future__ import annotations

import re

NAMES_A_GPU = re.compile(r"\b(cuda|gpu)\b", re.IGNORECASE)


def gated(item) -> bool:
    return any(NAMES_A_GPU.search(str(mark.kwargs.get("reason", ""))) for mark in item.iter_markers("skipif"))


def pytest_collection_modifyitems(config, items):
    keep = [item for item in items if gated(item)]
    dropped = [item for item in items if not gated(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep
