"""A built wheel carries the bank and the exercises: an installed quizapp finds its questions."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_installs_and_finds_its_questions(tmp_path):
    dist = tmp_path / "dist"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "-q", "-w", str(dist), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    (wheel,) = dist.glob("quizapp-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(p.name for p in (ROOT / "questions").glob("*.yaml"))
    assert shipped and all(f"quizapp/_data/questions/{name}" in names for name in shipped)
    assert any(n.startswith("quizapp/_data/exercises/") for n in names)

    # A fresh venv with only the wheel; its dependencies come from this environment's site-packages
    # through PYTHONPATH, so the test needs no network and no second copy of torch.
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    target = next(env_dir.glob("lib/python*/site-packages"))
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(target)
    env = {**os.environ, "PYTHONPATH": sysconfig.get_paths()["purelib"], "QUIZAPP_HOME": str(tmp_path / "home")}
    probe = subprocess.run([str(env_dir / "bin" / "python"), "-c",
                            "import quizapp, quizapp.paths as p; print(quizapp.__file__); print(p.shipped_questions_dir())"],
                           capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    assert probe.returncode == 0, probe.stderr
    module_file, questions_dir = probe.stdout.split()
    assert Path(module_file).is_relative_to(target) and Path(questions_dir).is_relative_to(target)
    check = subprocess.run([str(env_dir / "bin" / "python"), "-m", "quizapp", "bank", "check"],
                           capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"{len(shipped)} files" in check.stderr
