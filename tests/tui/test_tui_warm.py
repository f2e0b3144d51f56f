"""The exercise screen's loop: reset with a confirm, regrade on save, a new grade replacing a running
one, and the app's own warm grader (torch in the zygote, never in the app; nothing left after quit)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from test_tui_exercises import STARTER, alive, open_exercise
from tuihelp import SIZE, settle

from quizapp.study.store import Store
from quizapp.tui.screens.dialogs import ConfirmScreen
from quizapp.tui.screens.exercise import ExerciseScreen

ROOT = Path(__file__).resolve().parents[2]


async def wait_until(pilot, condition, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        await pilot.pause(0.05)


def grades() -> list[str]:
    with Store.open() as store:
        return [g.status for g in store.grades("scaled_loop")]


async def test_reset_asks_then_puts_the_starter_back_and_keeps_progress(make_app, work_dir):
    mine = work_dir / "scaled_loop.py"
    mine.write_text("my work\n")
    app = make_app("fail")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_exercise(pilot)
        await pilot.press("g")
        await settle(pilot)
        await pilot.press("R")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert mine.read_text() == "my work\n"
        await pilot.press("R", "y")
        await pilot.pause()
        assert isinstance(app.screen, ExerciseScreen) and mine.read_text() == STARTER
        await pilot.press("R")  # already the starter: nothing to ask
        await pilot.pause()
        assert app.screen is screen
        await pilot.pause(0.5)  # a reset is not graded by itself
        await settle(pilot)
    assert grades() == ["fail"]


async def test_reset_is_offered_only_when_the_file_exists(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_exercise(pilot)
        assert screen.check_action("reset", ()) is None


async def test_a_save_after_a_grade_grades_again(make_app, work_dir):
    mine = work_dir / "scaled_loop.py"
    mine.write_text(STARTER)
    app = make_app("pass")
    async with app.run_test(size=SIZE) as pilot:
        await open_exercise(pilot)
        await pilot.pause(0.3)  # a save before the first grade is not graded
        mine.write_text(STARTER + "# one\n")
        await pilot.pause(0.5)
        await settle(pilot)
        assert grades() == []
        await pilot.press("g")
        await settle(pilot)
        assert grades() == ["pass"]
        # An atomic save from an outside editor: a new file renamed over the old one.
        draft = work_dir / ".scaled_loop.py.tmp"
        draft.write_text(STARTER + "# two\n")
        os.replace(draft, mine)
        await wait_until(pilot, lambda: len(grades()) == 2)
        await settle(pilot)
        assert "last grade: pass 3/3" in str(app.screen.query_one("#file-line").render())


async def test_a_new_grade_replaces_the_running_one(make_app, work_dir, tmp_path, monkeypatch):
    pids_file = tmp_path / "pids"
    monkeypatch.setenv("FAKE_GRADER_PIDS", str(pids_file))
    (work_dir / "scaled_loop.py").write_text(STARTER)
    app = make_app("slow")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_exercise(pilot)
        await pilot.press("g")
        await wait_until(pilot, lambda: pids_file.exists() and pids_file.read_text().endswith("\n"))
        first = [int(p) for p in pids_file.read_text().split()]
        pids_file.unlink()
        await pilot.press("g")
        await wait_until(pilot, lambda: pids_file.exists() and pids_file.read_text().endswith("\n"))
        second = [int(p) for p in pids_file.read_text().split()]
        await wait_until(pilot, lambda: not any(alive(p) for p in first), timeout=10)
        assert screen.grading and all(alive(p) for p in second)
        assert "cancelled" not in str(screen.query_one("#grade-status").render())
        await pilot.press("x")
        await wait_until(pilot, lambda: not screen.grading)
        assert "cancelled" in str(screen.query_one("#grade-status").render())
    deadline = time.monotonic() + 5
    while any(alive(p) for p in second) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in second)


DRIVER = textwrap.dedent("""
    import asyncio, json, os, sys, time
    from pathlib import Path
    sys.path.insert(0, sys.argv[2])
    from tuihelp import pack_bank
    from quizapp.catalog import load_catalog
    from quizapp.grading import warm
    from quizapp.tui.app import QuizApp
    from quizapp.tui.screens.exercise import ExerciseScreen

    async def main():
        work = Path(sys.argv[1])
        app = QuizApp(bank=pack_bank(), catalog=load_catalog(), work_dir=work)
        seen = {}
        async with app.run_test(size=(100, 32)) as pilot:
            screen = ExerciseScreen(app.context, app.context.catalog["warmup_cosine"])
            await app.push_screen(screen)
            await pilot.press("g")
            await app.workers.wait_for_complete()
            await pilot.pause(0.2)
            seen["first"] = [g.status for g in app.context.grades("warmup_cosine")]
            seen["zygote"] = warm.shared().zygote_pid
            buggy = (work / "warmup_cosine.py").read_text().replace("math.pi * progress", "math.pi * progress * 2")
            (work / "warmup_cosine.py").write_text(buggy)
            deadline = time.monotonic() + 120
            while len(app.context.grades("warmup_cosine")) < 2 and time.monotonic() < deadline:
                await pilot.pause(0.05)
            await app.workers.wait_for_complete()
            seen["second"] = [g.status for g in app.context.grades("warmup_cosine")]
            seen["torch_here"] = "torch" in sys.modules
        print(json.dumps(seen))

    asyncio.run(main())
""")


def test_the_app_grades_warm_regrades_on_save_and_leaves_no_process_after_quit(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "warmup_cosine.py").write_text((ROOT / "exercises" / "warmup_cosine" / "reference.py").read_text())
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    out = subprocess.run([sys.executable, str(driver), str(work), str(Path(__file__).parent)],
                         capture_output=True, text=True, timeout=400)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["first"] == ["pass"] and seen["second"] == ["pass", "fail"]
    assert seen["torch_here"] is False  # the app never imports torch: the zygote did
    time.sleep(0.3)
    assert not alive(seen["zygote"])
