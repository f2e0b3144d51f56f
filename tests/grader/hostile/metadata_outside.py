# quizapp: exercise=label_smoothing
"""Hostile: changes metadata outside its grade's folder, which Landlock has no right for: makes its own
file unreadable (the next honest grade would fail), touches the learner's file (a `watch` that took a
new mtime for a save would regrade for ever), makes the progress folder unreadable, leaves a file in
/dev/shm, and starts a chain of processes that each leave the session (setsid), to outlive the grade.
Says on its stdout what it was allowed."""

import os
import subprocess
from pathlib import Path


def attempt(what, action):
    try:
        action()
    except OSError as exc:
        print(f"DENIED {what}: {type(exc).__name__}")
    else:
        print(f"ALLOWED {what}")


learner_file = os.environ.get("HOSTILE_LEARNER_FILE", "")
attempt("chmod own file", lambda: os.chmod(__file__, 0))
attempt("chmod learner file", lambda: os.chmod(learner_file, 0))
attempt("utime learner file", lambda: os.utime(learner_file, (1, 1)))
attempt("chmod progress folder", lambda: os.chmod(os.environ["QUIZAPP_HOME"], 0))
mark = os.environ["HOSTILE_MARK"]  # digits: the file's name, and the fraction of every link's sleep
attempt("shm", lambda: Path("/dev/shm", f"quizapp-hostile-{mark}").write_text("left behind"))
# Each link leaves its session, then starts the next one and becomes `sleep 299.<mark>`: a sweep
# that kills one level a pass needs as many passes as there are links.
chain = 'n=$1; if [ "$n" -gt 0 ]; then setsid sh -c "$0" "$0" $((n - 1)) "$2" & fi; exec sleep "$2"'
subprocess.Popen(["sh", "-c", chain, chain, "130", f"299.{mark}"], start_new_session=True)


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    raise NotImplementedError
