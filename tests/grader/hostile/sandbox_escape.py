# quizapp: exercise=label_smoothing
"""Hostile: tries, at import, to write the progress store and the installed checks, to print on the
grader's own stdout, to signal the grader and to connect out; says on its stdout what it was allowed."""

import os
import socket
import sys
from pathlib import Path


def attempt(what, action):
    try:
        action()
    except OSError as exc:
        print(f"DENIED {what}: {type(exc).__name__}")
    else:
        print(f"ALLOWED {what}")


def append(path):
    with open(path, "a") as fh:
        fh.write("# forged\n")


attempt("store", lambda: append(Path(os.environ["QUIZAPP_HOME"]) / "progress.sqlite3"))
attempt("checks", lambda: append(Path(sys.argv[sys.argv.index("--exercise-dir") + 1]) / "checks.py"))
attempt("grader stdout", lambda: append(f"/proc/{os.getppid()}/fd/1"))
attempt("signal", lambda: os.kill(os.getppid(), 0))
attempt("network", lambda: socket.create_connection(("127.0.0.1", 9), timeout=1).close())
attempt("own folder", lambda: append("here.txt"))


def label_smoothing_cross_entropy(logits, targets, *, smoothing=0.1, ignore_index=-100):
    raise NotImplementedError
