"""How long the TUI takes to show its first screen, next to `python -c "import textual.app"`.

Each figure is a fresh interpreter, run several times (interleaved, so all see the same load), median.
The app runs headless at 100x32 on the shipped bank with an empty progress store (a temp QUIZAPP_HOME)
and leaves as soon as its home screen is up. Two ways of timing, each against its own baseline:

- to the first frame (the goal is read from this one): start to the moment the first screen is
  drawn, next to start to the end of `import textual.app`; neither waits for the interpreter's
  shutdown, which the learner never waits for on the way in.
- to exit: start to the end of the process, the app leaving right after its first screen, next to
  `python -c "import textual.app"` run to its end. This one is flattered: an app that quits before
  its collector settles freezes its objects instead of collecting them (see QuizApp.run), so it
  skips the final collection at shutdown that the baseline and the one-line app pay.

The headline runs the `quizapp` command's entry point, as a learner starts it. Also printed, for
scale: `QuizApp().run()` called directly (without the launcher's pause of the collector during the
imports), the start after a question pack was edited (the start-up cache is rebuilt), and a one-line
Textual app. Prints the figures and their ratios; asserts nothing. The children run in a temp folder,
so they import quizapp as the environment finds it (PYTHONPATH can point them at another checkout).

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

# The child patches QuizApp when quizapp.tui.app is first imported, so that it imports nothing before
# the entry point does (the launcher pauses the collector before Textual's import).
HOOK = """
import importlib.util, os, sys, time

class _PatchOnImport:
    def find_spec(self, name, path=None, target=None):
        if name != "quizapp.tui.app":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run_module = spec.loader.exec_module

        def exec_module(module):
            run_module(module)
            module.QuizApp.on_ready = ON_READY

        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _PatchOnImport())
"""
ENTRY = "sys.argv = ['quizapp']\nfrom quizapp.main import main\nmain()\n"
COMMAND = HOOK + "ON_READY = lambda app: app.exit(0)\n" + ENTRY
COMMAND_PAINT = HOOK + "ON_READY = lambda app: (print(time.time(), flush=True), os._exit(0))\n" + ENTRY
DIRECT = ("from quizapp.tui.app import QuizApp; "
          "raise SystemExit(QuizApp(exit_after_first_screen=True).run(headless=True, size=(100, 32)))")
BASELINE = "import textual.app"
BASELINE_PAINT = "import time, textual.app; print(time.time(), flush=True)"
# For scale: the least a Textual app costs to show one line and exit, with the same hook.
HELLO = ("from textual.app import App\nfrom textual.widgets import Static\n"
         "class Hello(App):\n    def compose(self):\n        yield Static('hello')\n"
         "    def on_ready(self):\n        self.exit()\n"
         "Hello().run(headless=True, size=(100, 32))")
HEADLESS = {"TEXTUAL_DRIVER": "textual.drivers.headless_driver:HeadlessDriver", "COLUMNS": "100", "LINES": "32"}


def to_exit(code: str, env: dict[str, str], *, drop_cache: bool = False) -> float:
    if drop_cache:
        shutil.rmtree(os.path.join(env["QUIZAPP_HOME"], "cache"), ignore_errors=True)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, stdout=subprocess.DEVNULL,
                   stdin=subprocess.DEVNULL, cwd=env["QUIZAPP_HOME"])
    return time.perf_counter() - started


def to_print(code: str, env: dict[str, str]) -> float:
    """Start to the wall-clock time the child prints (its first frame, or the end of its import)."""
    started = time.time()
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, cwd=env["QUIZAPP_HOME"]).stdout
    return float(out.split()[-1]) - started


def line(label: str, runs: list[float], base: list[float]) -> str:
    ms, base_ms = statistics.median(runs) * 1000, statistics.median(base) * 1000
    return (f"  {label:<44} {ms:5.0f} ms  (min {min(runs) * 1000:.0f}, max {max(runs) * 1000:.0f})"
            f"   ratio {ms / base_ms:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="quizapp-bench-") as home:
        env = {**os.environ, "QUIZAPP_HOME": home, **HEADLESS}
        # As installed, quizapp runs from compiled bytecode, like textual does in the baseline; with
        # PYTHONDONTWRITEBYTECODE set, an editable checkout would recompile every module each start.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        to_exit(COMMAND, env)  # warm the disk cache and write the store and the start-up cache once
        names = ("base", "command", "direct", "edited", "hello", "base_paint", "command_paint")
        runs: dict[str, list[float]] = {name: [] for name in names}
        for _ in range(args.repeat):
            runs["base"].append(to_exit(BASELINE, env))
            runs["command"].append(to_exit(COMMAND, env))
            runs["direct"].append(to_exit(DIRECT, env))
            runs["edited"].append(to_exit(COMMAND, env, drop_cache=True))
            runs["hello"].append(to_exit(HELLO, env))
            runs["base_paint"].append(to_print(BASELINE_PAINT, env))
            runs["command_paint"].append(to_print(COMMAND_PAINT, env))
    print(f"TUI start-up, headless at 100x32, shipped bank, empty store; median of {args.repeat}")
    print("to the first frame (shutdown left out):")
    print(line("import textual.app, to its end", runs["base_paint"], runs["base_paint"]))
    print(line("quizapp (the command), to its first frame", runs["command_paint"], runs["base_paint"]))
    print("to exit (the app leaves after its first screen; see the note above on shutdown):")
    print(line("python -c 'import textual.app'", runs["base"], runs["base"]))
    print(line("quizapp (the command)", runs["command"], runs["base"]))
    print(line("QuizApp().run() directly", runs["direct"], runs["base"]))
    print(line("quizapp after a pack was edited", runs["edited"], runs["base"]))
    print(line("a one-line Textual app (for scale)", runs["hello"], runs["base"]))


if __name__ == "__main__":
    main()
