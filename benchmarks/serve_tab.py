"""`quizapp serve` in a real browser: the time from opening the link to the app's first screen, and
the memory each tab's app costs, in one run, beside the server's own.

- first byte: from `page.goto(link)` to the page's first output from the app (textual.js marks the
  body `-first-byte`);
- first screen: to the first screenshot in which the home screen's text is drawn (many colours);
- memory: the resident memory of each tab's app process and everything it started (its warm grader
  included once it has one), read from /proc, after the first screen and again after opening an
  exercise (which starts the warm grader).

Needs Playwright and Chromium (Debian's `chromium`, or QUIZAPP_CHROMIUM).

    python benchmarks/serve_tab.py [--tabs 3] [--screenshot page.png]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "web"))

from servehelp import colours, descendants, start  # noqa: E402

from quizapp.grading.processes import tree_rss_mb  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tabs", type=int, default=3)
    parser.add_argument("--screenshot", type=Path, help="save the first tab's home screen here")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("QUIZAPP_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("no Chromium here: apt install chromium, or set QUIZAPP_CHROMIUM")
        return 2
    home = Path(tempfile.mkdtemp(prefix="quizapp-bench-serve-"))
    served = start(home / "home", "--max-sessions", str(args.tabs))
    firsts, screens, memory, memory_graded = [], [], [], []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
            pages = []
            for tab in range(args.tabs):
                context = browser.new_context(viewport={"width": 1200, "height": 760})
                page = context.new_page()
                start_s = time.perf_counter()
                page.goto(served.url)
                page.wait_for_selector("body.-first-byte", state="attached", timeout=120_000)
                firsts.append(time.perf_counter() - start_s)
                while colours(page.screenshot()) < 20 and time.perf_counter() - start_s < 120:
                    page.wait_for_timeout(100)
                screens.append(time.perf_counter() - start_s)
                page.wait_for_timeout(1500)
                if tab == 0 and args.screenshot:
                    page.screenshot(path=str(args.screenshot))
                pages.append(page)
            apps = served.apps()
            for pid in apps:
                memory.append(tree_rss_mb({pid}))
            # A tab that grades has its warm grader (a process that imported torch): what it costs then.
            # x: the exercises, Enter: the first, c and Enter: write its starter where it offers, g: grade it.
            pages[0].locator(".xterm-helper-textarea").focus()
            for key, pause_ms in (("x", 800), ("Enter", 1500), ("c", 1000), ("Enter", 1000), ("g", 20_000)):
                pages[0].keyboard.press(key)
                pages[0].wait_for_timeout(pause_ms)
            if args.screenshot:
                pages[0].screenshot(path=str(args.screenshot.with_name(args.screenshot.stem + "-graded.png")))
            memory_graded.append(tree_rss_mb({apps[0]}) if apps else 0.0)
            processes = len(descendants(apps[0]) | {apps[0]}) if apps else 0
            server_mb = tree_rss_mb({served.proc.pid}) - sum(tree_rss_mb({pid}) for pid in served.apps())
            browser.close()
    finally:
        served.stop()
        shutil.rmtree(home, ignore_errors=True)
    print(f"{args.tabs} tabs, one after another; {os.cpu_count()} cores")
    print(f"  link to first byte:   median {statistics.median(firsts):.2f} s  ({', '.join(f'{t:.2f}' for t in firsts)})")
    print(f"  link to first screen: median {statistics.median(screens):.2f} s  ({', '.join(f'{t:.2f}' for t in screens)})")
    print(f"  memory per tab (the app): median {statistics.median(memory):.0f} MB  "
          f"({', '.join(f'{m:.0f}' for m in memory)})")
    print(f"  a tab on an exercise (the app and its warm grader, {processes} processes): {memory_graded[0]:.0f} MB")
    print(f"  the server itself: {server_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
