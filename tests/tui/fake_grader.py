"""A stand-in for `quizapp grade --events`: prints canned event lines, so TUI tests need no torch.

Usage: fake_grader.py MODE FILE --events --exercise ID
MODE: pass | fail | slow (one check, then waits with a child process in its group) | crash
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone

GRADED_AT = datetime(2026, 3, 1, 11, 30, tzinfo=timezone.utc)
CHECKS = [("runs", "Runs and returns a loss per epoch"), ("scaled", "Backward runs on the scaled loss"),
          ("losses", "Epoch losses match the reference")]
LONG_MESSAGE = ("expected backward on loss x 65536, saw backward on the unscaled loss (0.731 at iteration 0); "
                "call scaler.scale(loss).backward() so that small float16 gradients do not flush to zero")
CURVES = {"curves": {"title": "Loss per epoch",
                     "series": {"yours": [1.0, 0.7, 0.5, 0.42], "reference": [1.0, 0.6, 0.4, 0.3]}}}


def emit(event: dict) -> None:
    print(json.dumps(event), flush=True)


def main() -> int:
    mode, file, exercise = sys.argv[1], sys.argv[2], sys.argv[sys.argv.index("--exercise") + 1]
    print("some output that is not an event", flush=True)
    if mode == "crash":
        print("Traceback (most recent call last):\nRuntimeError: the grader fell over", file=sys.stderr)
        return 1
    emit({"event": "start", "exercise": exercise, "device": "cpu", "torch": "9.9.9",
          "checks": [{"id": i, "title": t} for i, t in CHECKS]})
    if mode == "slow":
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        with open(os.environ["FAKE_GRADER_PIDS"], "w") as fh:
            fh.write(f"{os.getpid()} {helper.pid}\n")
        emit({"event": "check", "id": "runs", "title": CHECKS[0][1], "status": "pass", "message": ""})
        time.sleep(120)
        return 1
    failing = mode == "fail"
    results = [
        ("runs", "pass", "", {}),
        ("scaled", "fail" if failing else "pass",
         LONG_MESSAGE if failing else "", {}),
        ("losses", "pass", "", CURVES),
    ]
    for (check_id, status, message, data), (_, title) in zip(results, CHECKS):
        emit({"event": "check", "id": check_id, "title": title, "status": status, "message": message, "data": data})
    status = "fail" if failing else "pass"
    passed = sum(1 for r in results if r[1] == "pass")
    from quizapp.study.store import Store

    with Store.open() as store:
        store.record_grade(exercise, status=status, checks_passed=passed, checks_total=len(results), device="cpu",
                           duration_s=1.5, file_path=file, at=GRADED_AT)
    emit({"event": "report", "report": {
        "schema": 1, "exercise": exercise, "file": file, "status": status, "message": None, "device": "cpu",
        "torch": "9.9.9", "duration_s": 1.5,
        "checks": [{"id": i, "title": t, "status": r[1], "message": r[2]} for (i, t), r in zip(CHECKS, results)],
    }})
    return 0 if status == "pass" else 1


if __name__ == "__main__":
    sys.exit(main())
