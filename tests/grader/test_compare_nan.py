"""A LoRA layer whose output is all NaN must not pass the checks that compare outputs: NaN is never
close to anything (graded through the public CLI, like a learner's file)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "exercises" / "lora" / "reference.py"
RIGHT = "return self.base(x) + self.scaling * (self.dropout(x) @ self.lora_A.T @ self.lora_B.T)"


def test_an_all_nan_output_fails_the_output_checks(tmp_path):
    source = REFERENCE.read_text(encoding="utf-8")
    assert source.count(RIGHT) == 1, "the reference's forward changed: update this test's copy of it"
    nan_file = tmp_path / "all_nan.py"
    nan_file.write_text(source.replace(RIGHT, f"out = {RIGHT[len('return '):]}\n        return out * float('nan')"),
                        encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "quizapp", "grade", str(nan_file), "--exercise", "lora", "--json"],
                         capture_output=True, text=True, timeout=600)
    report = json.loads(out.stdout)
    checks = {c["id"]: c for c in report["checks"]}
    assert out.returncode == 1 and report["status"] == "fail", report
    for check_id in ("lora-init", "lora-forward"):
        check = checks[check_id]
        assert check["status"] == "fail", check
        assert "nan" in check["message"].lower(), check
