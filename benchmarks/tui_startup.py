"""How long the TUI takes to show its first screen, next to `python -c "import textual.app"`.

Both are timed the same way: a fresh interpreter, start to exit, several times (interleaved), median. The app runs
headless on the shipped bank with an empty progress store (a temp QUIZAPP_HOME) and exits as soon
as its home screen is ready. Prints the figures and their ratio; asserts nothing.

The usual start reads the bank and the exercise catalog from the start-up cache (written by the
warm-up run); "after an edit" removes the cache first, as a changed question pack would.

    python benchmarks/tui_startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

APP = ("from quizapp.tui.app import QuizApp; "
       "raise SystemExit(QuizApp(exit_after_first_screen=True).run(headless=True, size=(100, 32)))")
# The same start through the `quizapp` command (its entry point, as a learner runs it), made to leave after
# the first screen; TEXTUAL_DRIVER keeps it headless.
COMMAND = ("import sys, quizapp.tui.app as tui\n"
           "tui.QuizApp.on_ready = lambda self: self.exit(0)\n"
           "sys.argv = ['quizapp']\n"
           "from quizapp.main import main\n"
           "main()")
HEADLESS = "textual.drivers.headless_driver:HeadlessDriver"
BASELINE = "import textual.app"
# For scale: the least a Textual app costs to show one line and exit, with the same hook.
HELLO = ("from textual.app import App\nfrom textual.widgets import Static\n"
         "class Hello(App):\n    def compose(self):\n        yield Static('hello')\n"
         "    def on_ready(self):\n        self.exit()\n"
         "Hello().run(headless=True, size=(100, 32))")


def timed(code: str, env: dict[str, str], *, drop_cache: bool = False) -> float:
    if drop_cache:
        shutil.rmtree(os.path.join(env["QUIZAPP_HOME"], "cache"), ignore_errors=True)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, stdout=subprocess.DEVNULL,
                   stdin=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="quizapp-bench-") as home:
        env = {**os.environ, "QUIZAPP_HOME": home}
        # As installed, quizapp runs from compiled bytecode, like textual does in the baseline; with
        # PYTHONDONTWRITEBYTECODE set, an editable checkout would recompile every module each start.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        timed(APP, env)  # warm the disk cache and write the store once, like a second start would
        app, baseline, hello, edited, command = [], [], [], [], []
        for _ in range(args.repeat):  # interleaved, so all see the same machine load
            app.append(timed(APP, env))
            command.append(timed(COMMAND, {**env, "TEXTUAL_DRIVER": HEADLESS}))
            edited.append(timed(APP, env, drop_cache=True))
            baseline.append(timed(BASELINE, env))
            hello.append(timed(HELLO, env))
    app_s, base_s, hello_s = statistics.median(app), statistics.median(baseline), statistics.median(hello)
    print(f"TUI to first screen (headless, shipped bank): median {app_s * 1000:.0f} ms "
          f"(min {min(app) * 1000:.0f}, max {max(app) * 1000:.0f}, n={args.repeat})")
    print(f"python -c 'import textual.app':             median {base_s * 1000:.0f} ms "
          f"(min {min(baseline) * 1000:.0f}, max {max(baseline) * 1000:.0f}, n={args.repeat})")
    print(f"a one-line Textual app to first screen:     median {hello_s * 1000:.0f} ms (for scale)")
    command_s = statistics.median(command)
    print(f"the same through the quizapp command:       median {command_s * 1000:.0f} ms (80x24)")
    edited_s = statistics.median(edited)
    print(f"TUI after a pack was edited (cache rebuilt): median {edited_s * 1000:.0f} ms")
    print(f"ratio: {app_s / base_s:.2f} (TUI / import textual.app); through the command {command_s / base_s:.2f}; "
          f"after an edit {edited_s / base_s:.2f}; one-line app {hello_s / base_s:.2f}")


if __name__ == "__main__":
    main()
