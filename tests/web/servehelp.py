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

from quizapp.checking import reaping
from quizapp.checking.reaping import children_by_parent, running

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
            if b"quizapp" in argv and b"serve" not in argv and running(pid):
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


def descendants(pid: int) -> set[int]:
    """The processes below `pid` that are still running."""
    return {child for child in reaping.descendants([pid]) if running(child)}


ESCAPES = re.compile(r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])")


class AppOutput:
    """What the app in a page writes to it, as text (escape sequences removed), read from the page's
    websocket: a test waits for the words it expects on screen instead of for a number of seconds."""

    def __init__(self, page):
        self.page = page
        self.text = ""
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload) -> None:
        data = payload.decode("utf-8", errors="replace") if isinstance(payload, bytes) else payload
        self.text += ESCAPES.sub("", data)

    def mark(self) -> int:
        return len(self.text)

    def wait_for(self, words: str, since: int = 0, timeout: float = 60.0) -> bool:
        """True once `words` appear in what the app wrote after `since`. Playwright's sync API hears
        frames only while it waits itself, hence page.wait_for_timeout."""
        deadline = time.monotonic() + timeout
        while words not in self.text[since:]:
            if time.monotonic() > deadline:
                return False
            self.page.wait_for_timeout(50)
        return True

    def press(self, key: str, timeout: float = 30.0) -> None:
        """Press `key`, then wait until the app has written something back."""
        since = self.mark()
        self.page.keyboard.press(key)
        deadline = time.monotonic() + timeout
        while len(self.text) == since and time.monotonic() < deadline:
            self.page.wait_for_timeout(50)


def colours(png: bytes) -> int:
    """How many colours a screenshot holds: a blank page has a handful."""
    import io

    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        return len(image.convert("RGB").getcolors(maxcolors=1_000_000) or ())


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
