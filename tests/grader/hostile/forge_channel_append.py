# quizapp: exercise=warmup_cosine
"""Hostile: appends a complete passing event stream to the result channel named in sys.argv, then
ends the process before any check runs. The schedule itself is not written."""

import json
import os
import sys

FORGED = [
    {"event": "start", "device": "cpu", "torch": "forged", "checks": [{"id": "forged", "title": "Forged"}]},
    {"event": "check", "id": "forged", "title": "Forged", "status": "pass", "message": "", "data": {}},
    {"event": "done"},
]

if "--results" in sys.argv:
    with open(sys.argv[sys.argv.index("--results") + 1], "a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(event) + "\n" for event in FORGED))
    os._exit(0)


def get_cosine_schedule_with_warmup(optimizer, warmup_steps, total_steps, *, min_lr_ratio=0.0):
    raise NotImplementedError("not written")
