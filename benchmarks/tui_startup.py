"""How long the TUI takes to show its first screen, next to `python -c "import textual.app"`.

Both are timed the same way: a fresh interpreter, start to exit, several times (interleaved), median. The app runs
headless on the shipped bank with an empty progress store (a temp QUIZAPP_HOME) and exits as soon
as its home screen is ready. Prints the figures and their ratio; asserts nothing. Also printed: the
start through the `quizapp` command, and both sides timed to the moment itself, without shutdown.

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
# Up to the moment itself, leaving out the interpreter's shutdown, which the learner never waits for:
# each child prints the wall clock when its first screen is drawn (or textual.app is imported).
PAINT = ("import os, time\nfrom quizapp.tui.app import QuizApp\n"
         "QuizApp.on_ready = lambda self: (print(time.time(), flush=True), os._exit(0))\n"
         "QuizApp().run(headless=True, size=(100, 32))")
PAINT_BASELINE = "import time, textual.app; print(time.time(), flush=True)"


def until_printed(code: str, env: dict[str, str]) -> float:
    started = time.time()
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True,
                         stdin=subprocess.DEVNULL).stdout
    return float(out.split()[-1]) - started


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
        app, baseline, hello, edited, command, paint, paint_base = [], [], [], [], [], [], []
        for _ in range(args.repeat):  # interleaved, so all see the same machine load
            paint.append(until_printed(PAINT, env))
            paint_base.append(until_printed(PAINT_BASELINE, env))
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
    paint_s, paint_base_s = statistics.median(paint), statistics.median(paint_base)
    print(f"to the first frame, shutdown left out:      median {paint_s * 1000:.0f} ms "
          f"(import textual.app: {paint_base_s * 1000:.0f} ms)")
    print(f"ratio: {app_s / base_s:.2f} (TUI / import textual.app); through the command {command_s / base_s:.2f}; "
          f"after an edit {edited_s / base_s:.2f}; one-line app {hello_s / base_s:.2f}; "
          f"shutdown left out {paint_s / paint_base_s:.2f}")


if __name__ == "__main__":
    main()
