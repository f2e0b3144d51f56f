"""A `quizapp serve` started for a test, and the processes it runs."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from quizapp.checking.reaping import children_by_parent

URL = re.compile(r"(http://127\.0\.0\.1:(\d+))/\?token=([A-Za-z0-9_-]+)")


@dataclass
class Served:
    proc: subprocess.Popen
    base: str  # http://127.0.0.1:PORT
    port: int
    token: str
    home: Path
    log: list[str]

    @property
    def url(self) -> str:
        return f"{self.base}/?token={self.token}"

    @property
    def cookie(self) -> dict:
        return {f"quizapp-token-{self.port}": self.token}

    def apps(self) -> list[int]:
        """The app processes the server runs now (its children running `-m quizapp` without `serve`)."""
        found = []
        for pid in children_by_parent().get(self.proc.pid, ()):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"quizapp" in argv and b"serve" not in argv and alive(pid):
                found.append(pid)
        return found

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def descendants(pid: int) -> set[int]:
    children, found, todo = children_by_parent(), set(), [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if alive(child):
                found.add(child)
            todo.append(child)
    return found


def start(home: Path, *args: str) -> Served:
    env = dict(os.environ, QUIZAPP_HOME=str(home), SECRET_OF_THE_SERVER="not for the tabs")
    proc = subprocess.Popen([sys.executable, "-m", "quizapp", "serve", "--no-browser", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    seen = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        match = URL.search(line)
        if match:
            # The server logs on: read it, or a full pipe would stop the server.
            threading.Thread(target=lambda: [seen.append(x) for x in proc.stdout], daemon=True).start()
            return Served(proc, match.group(1), int(match.group(2)), match.group(3), home, seen)
    proc.kill()
    raise AssertionError("quizapp serve printed no link:\n" + "".join(seen))


def wait_for(predicate, timeout: float = 30.0, step: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()
