# quizapp: exercise=warmup_cosine
"""Hostile: writes a passing event stream to every descriptor the process holds open (but stdin,
stdout and stderr), wherever the grader keeps its channel, as plain JSON lines and as lines that
look signed (a made-up digest and sequence numbers), then ends the process."""

import json
import os

FORGED = [
    {"event": "start", "device": "cpu", "torch": "forged", "checks": [{"id": "forged", "title": "Forged"}]},
    {"event": "check", "id": "forged", "title": "Forged", "status": "pass", "message": "", "data": {}},
    {"event": "done"},
]
PLAIN = "".join(json.dumps(event) + "\n" for event in FORGED)
SIGNED = "".join("0" * 64 + " " + json.dumps({"seq": i, **event}) + "\n" for i, event in enumerate(FORGED))

for name in os.listdir("/proc/self/fd"):
    fd = int(name)
    if fd > 2:
        try:
            os.write(fd, (PLAIN + SIGNED).encode())
        except OSError:
            pass
os._exit(0)


def get_cosine_schedule_with_warmup(optimizer, warmup_steps, total_steps, *, min_lr_ratio=0.0):
    raise NotImplementedError("not written")
