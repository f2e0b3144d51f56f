"""One browser tab's app: textual-serve's AppService, started and stopped the way a server that
others can reach must.

What textual-serve does itself (kept): the app runs as `python -m quizapp` with Textual's web
driver, its screen and keys travel over the tab's websocket, downloads go through its manager.
What is changed here:

- the app is exec'd directly (no shell) in a session of its own, with the environment the server
  chose (`clean_environment`), not the server's whole environment: a server started from a shell
  that holds cloud credentials or an SSH agent does not hand them to every tab;
- `stop` is bounded: the app is asked to quit, and a few seconds later its whole process group is
  killed, so a tab that closes never leaves an app (or the warm grader it started) running;
- each input is timed, for the server's idle timeout.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Mapping
from importlib.metadata import version

from textual_serve.app_service import AppService

QUIT_GRACE_S = 5.0  # after asking the app to quit, before its process group is killed
# What an app process is given of the server's environment: where things are, the locale, quizapp's
# own settings. Everything else (tokens, credentials, agents' sockets) stays with the server.
PASSED_NAMES = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV",
                "CUDA_VISIBLE_DEVICES", "SYSTEMROOT")
PASSED_PREFIXES = ("LC_", "QUIZAPP_", "XDG_")


def clean_environment(source: Mapping[str, str], data_dir: str) -> dict[str, str]:
    """The environment of every app process: the names above from `source`, and QUIZAPP_HOME set to
    the server's data folder, so that every tab studies with the same progress store."""
    env = {name: value for name, value in source.items()
           if name in PASSED_NAMES or name.startswith(PASSED_PREFIXES)}
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    env["QUIZAPP_HOME"] = data_dir
    env["PYTHONUNBUFFERED"] = "1"
    return env


class AppSession(AppService):
    """The app behind one tab."""

    def __init__(self, argv: list[str], env: Mapping[str, str], *, cwd: str | None = None, **kwargs):
        super().__init__(" ".join(argv), **kwargs)
        self.cwd = cwd
        self.argv = list(argv)
        self.base_env = dict(env)
        self.started_at = time.monotonic()
        self.last_input = self.started_at
        self.stopping = False

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        env = dict(self.base_env)
        env.update({
            "TEXTUAL_DRIVER": "textual.drivers.web_driver:WebDriver",
            "TEXTUAL_FPS": "60",
            "TEXTUAL_COLOR_SYSTEM": "truecolor",
            "TERM_PROGRAM": "textual",
            "TERM_PROGRAM_VERSION": version("textual-serve"),
            "COLUMNS": str(width),
            "ROWS": str(height),
        })
        return env

    async def _open_app_process(self, width: int = 80, height: int = 24):
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=self._build_environment(width, height), cwd=self.cwd,
            start_new_session=True)
        self._stdin = process.stdin
        return process

    async def send_bytes(self, data: bytes) -> bool:
        self.last_input = time.monotonic()
        return await super().send_bytes(data)

    async def set_terminal_size(self, width: int, height: int) -> None:
        self.last_input = time.monotonic()
        await super().set_terminal_size(width, height)

    async def stop(self) -> None:
        """Ask the app to quit; kill its process group if it has not within QUIT_GRACE_S."""
        if self._process is None or self.stopping:
            return
        self.stopping = True
        try:
            await asyncio.wait_for(super().stop(), QUIT_GRACE_S)
        except (asyncio.TimeoutError, OSError, RuntimeError):
            pass  # a stuck or gone app: the kill below ends it either way
        finally:
            self.kill()
            try:
                await asyncio.wait_for(self._process.wait(), QUIT_GRACE_S)
            except asyncio.TimeoutError:
                pass

    def kill(self) -> None:
        """SIGKILL the app's process group (the app and whatever it started in it)."""
        if self._process is None or self._process.returncode is not None:
            return
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
