# quizapp: exercise=warmup_cosine
"""Hostile: replaces the result file named in sys.argv by one holding a passing event stream (a new
file renamed over it), then ends the process. The schedule itself is not written."""

import json
import os
import sys

FORGED = [
    {"event": "start", "device": "cpu", "torch": "forged", "checks": [{"id": "forged", "title": "Forged"}]},
    {"event": "check", "id": "forged", "title": "Forged", "status": "pass", "message": "", "data": {}},
    {"event": "done"},
]

if "--results" in sys.argv:
    path = sys.argv[sys.argv.index("--results") + 1]
    with open(path + ".new", "w", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(event) + "\n" for event in FORGED))
    os.replace(path + ".new", path)
    os._exit(0)


def get_cosine_schedule_with_warmup(optimizer, warmup_steps, total_steps, *, min_lr_ratio=0.0):
    raise NotImplementedError("not written")
