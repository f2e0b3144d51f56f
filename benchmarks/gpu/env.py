"""What benchmarks/gpu/run.sh needs to know of the machine, as JSON: the Python, torch and its CUDA, the
GPU, and which of the programme's Python modules are missing.

    python benchmarks/gpu/env.py [--out env.json]   # prints the JSON too

Exit status: 0 when every needed module imports, 3 when one is missing (named in "missing").
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

# Import name -> distribution: what the GPU programme runs (quizapp's grade and bench, pytest on
# tests/cuda and tests/facts). The TUI's, the exports' and the scheduler's packages are not needed.
# quizapp itself runs without platformdirs (quizapp/paths.py works out the same folders), but
# tests/conftest.py imports it, so the tests step needs it.
NEEDED = {"torch": "torch", "numpy": "numpy", "click": "click", "yaml": "pyyaml", "pytest": "pytest",
          "pytest_timeout": "pytest-timeout", "platformdirs": "platformdirs"}


def driver() -> str | None:
    if not shutil.which("nvidia-smi"):
        return None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def describe() -> dict:
    found = {"python": sys.version.split()[0], "python_path": sys.executable, "platform": platform.platform(),
             "cpu_count": os.cpu_count(), "driver": driver(),
             "dry_run": os.environ.get("QUIZAPP_GPU_DRY_RUN") == "1",
             "installed": os.environ.get("QUIZAPP_GPU_INSTALLED", "")}
    missing = []
    for module, dist in NEEDED.items():
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - a broken install counts as missing
            missing.append(f"{dist} ({type(exc).__name__}: {exc})")
    found["missing"] = missing
    try:
        import torch

        found["torch"] = torch.__version__
        found["torch_cuda"] = torch.version.cuda
        found["cuda_available"] = torch.cuda.is_available()
        if found["cuda_available"]:
            props = torch.cuda.get_device_properties(0)
            found["gpu"] = (f"{torch.cuda.get_device_name(0)}, compute capability {props.major}.{props.minor}, "
                            f"{props.total_memory / 2**30:.1f} GiB, {props.multi_processor_count} SMs")
            found["gpu_count"] = torch.cuda.device_count()
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        found["torch_error"] = f"{type(exc).__name__}: {exc}"
    return found


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    found = describe()
    text = json.dumps(found, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 3 if found["missing"] else 0


if __name__ == "__main__":
    sys.exit(main())
