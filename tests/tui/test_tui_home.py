"""Home's topic list: the keys and the mouse open the topic under the cursor; a long list scrolls to it."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import pytest
from textual import events
from tuihelp import NOW, SIZE, pack_bank, type_ahead

from quizapp.bank import load_bank
from quizapp.catalog import load_catalog
from quizapp.study.schedule import record_review
from quizapp.study.store import Store
from quizapp.tui.screens.home import HomeScreen
from quizapp.tui.screens.quiz import QuizScreen
from quizapp.tui.widgets.tiles import Tiles, fit_tiles, pick
from quizapp.tui.widgets.topiclist import TopicList


def many_topics(write_pack, count: int):
    paths = []
    for n in range(count):
        paths.append(write_pack(f"""
            topic: t{n:02d}
            title: Topic number {n:02d}
            questions:
              - {{id: t{n:02d}-1, type: card, difficulty: 1, prompt: Why {n}?, explanation: Because.}}
            """, f"t{n:02d}.yaml"))
    return load_bank(paths)


async def test_down_and_enter_study_the_second_topic_and_home_keeps_the_cursor(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        topics = app.screen.query_one("#topics", TopicList)
        assert topics.has_focus and topics.highlighted == 0
        second = list(app.context.bank.topics)[1]
        await pilot.press("down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, QuizScreen)
        assert app.screen.result.topic == second
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        assert app.screen.query_one("#topics", TopicList).highlighted_slug == second


async def test_keys_typed_ahead_are_taken_in_order(make_app, write_pack):
    """A burst of keys, as a fast typist or a paste delivers them, all queued before any is handled:
    Enter studies the topic the arrows moved to, not the one highlighted when it arrived."""
    app = make_app(bank=many_topics(write_pack, 5))
    async with app.run_test(size=SIZE) as pilot:
        await type_ahead(pilot, "down", "down", "enter")
        assert isinstance(app.screen, QuizScreen) and app.screen.result.topic == "t02"


async def test_a_click_on_a_row_studies_that_topic_and_a_click_on_the_heading_does_nothing(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        topics = app.screen.query_one("#topics", TopicList)
        assert topics.heading_height == 2  # the list's title and its column names
        for y in range(topics.heading_height):
            assert await pilot.click(TopicList, offset=(30, y))
            await pilot.pause()
            assert isinstance(app.screen, HomeScreen) and topics.highlighted == 0
        second = list(app.context.bank.topics)[1]
        assert await pilot.click(TopicList, offset=(30, topics.heading_height + 1))
        await pilot.pause()
        assert isinstance(app.screen, QuizScreen) and app.screen.result.topic == second
        assert topics.highlighted == 1


async def test_the_cursor_stays_on_screen_in_a_list_longer_than_the_terminal(make_app, write_pack):
    app = make_app(bank=many_topics(write_pack, 30))
    async with app.run_test(size=(80, 20)) as pilot:
        screen = app.screen  # home has no scroll container of its own: the screen scrolls
        topics = screen.query_one("#topics", TopicList)
        assert topics.row_count == 30 and screen.scroll_offset.y == 0
        await pilot.press("end")
        await pilot.pause()
        assert topics.highlighted == 29 and screen.scroll_offset.y > 0
        last_row_y = topics.region.y + topics.heading_height + 29  # region is where the widget is drawn, already scrolled
        assert 1 <= last_row_y < screen.region.bottom - 1  # between the title bar and the footer
        await pilot.press("home")
        await pilot.pause()
        assert topics.highlighted == 0 and screen.scroll_offset.y == 0  # the tiles are back in view
        await pilot.press("up", "pagedown")
        await pilot.pause()
        assert topics.highlighted == 10
        assert 1 <= topics.region.y + topics.heading_height + 10 < screen.region.bottom - 1
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, QuizScreen) and app.screen.result.topic == "t10"


async def test_a_theme_change_redraws_the_tiles_and_the_list_in_its_colours(make_app):
    """Both draw lines themselves (the tiles keep theirs between figures): a new theme must reach them."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        tiles, topics = app.screen.query_one(Tiles), app.screen.query_one(TopicList)

        def drawn():
            return ([segment.style for segment in tiles.render_line(0)],
                    [segment.style for segment in topics.render_line(topics.heading_height)])

        dark = drawn()
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert not app.current_theme.dark
        light = drawn()
        assert light[0] != dark[0] and light[1] != dark[1]
        assert light[0][0].bgcolor == tiles.visual_style.rich_style.bgcolor  # the light background


def test_the_first_screen_leaves_the_scheduler_and_the_grader_unloaded(tmp_path):
    """Start-up imports only what home draws: fsrs, the grading client and the other screens follow later."""
    script = textwrap.dedent("""
        import sys
        from quizapp.tui.app import QuizApp
        QuizApp(exit_after_first_screen=True).run(headless=True, size=(100, 32))
        print(sorted(m for m in sys.modules if m in {"fsrs", "quizapp.tui.grading", "quizapp.tui.screens.quiz",
                                                      "quizapp.study.schedule", "textual.widgets._header"}))
        """)
    env = {"QUIZAPP_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                            timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_home_draws_from_the_outline_and_the_questions_load_when_study_starts(tmp_path):
    """On a start from the cache the first screen needs no question objects: the bank loads on
    the first key that studies, and the session gets its questions."""
    script = textwrap.dedent("""
        import sys
        from quizapp.tui.app import QuizApp
        seen = {}

        async def pilot(pilot):
            seen["loaded_at_first_screen"] = "quizapp.bank.model" in sys.modules
            seen["topics"] = len(pilot.app.context.outline.topics)
            await pilot.press("r")
            await pilot.pause()
            seen["studying"] = type(pilot.app.screen).__name__
            seen["loaded_to_study"] = "quizapp.bank.model" in sys.modules
            pilot.app.exit(0)

        QuizApp().run(headless=True, size=(100, 32), auto_pilot=pilot)
        print(sorted(seen.items()))
        """)
    env = {"QUIZAPP_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                           timeout=120, env=env) for _ in range(2)]
    assert all(run.returncode == 0 for run in runs), runs[0].stderr + runs[1].stderr
    first, second = (dict(ast.literal_eval(run.stdout.strip().splitlines()[-1])) for run in runs)
    assert first["loaded_at_first_screen"]  # the cache was empty: the packs were parsed
    assert second == {"loaded_at_first_screen": False, "topics": first["topics"], "studying": "QuizScreen",
                      "loaded_to_study": True}
    assert first["topics"] >= 10


def test_the_collector_is_paused_until_the_first_screen_then_catches_up(tmp_path):
    """run() pauses the cyclic GC for start-up; after the first screen it collects once, freezes the
    survivors and runs again; a run that ends early leaves it on too."""
    script = textwrap.dedent("""
        import asyncio, gc
        import quizapp.tui.app as tui
        from quizapp.tui.app import QuizApp

        tui.GC_SETTLE_S = 0.05
        seen = {}

        async def pilot(pilot):
            seen["at_first_screen"] = gc.isenabled()
            await asyncio.sleep(0.5)
            seen["later"] = gc.isenabled()
            seen["frozen"] = gc.get_freeze_count() > 0
            pilot.app.exit(0)

        QuizApp().run(headless=True, size=(100, 32), auto_pilot=pilot)
        seen["after"] = gc.isenabled()
        QuizApp(exit_after_first_screen=True).run(headless=True, size=(100, 32))
        seen["after_early_exit"] = gc.isenabled()
        print(sorted(seen.items()))
        """)
    env = {"QUIZAPP_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                            timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(sorted({
        "at_first_screen": False, "later": True, "frozen": True, "after": True, "after_early_exit": True}.items()))


def test_the_launcher_pauses_the_collector_before_textual_is_imported(tmp_path):
    """`quizapp` turns the collector off before importing Textual, and the app turns it back on after
    its first screen, as a run() of its own would."""
    script = textwrap.dedent("""
        import gc, importlib.util, sys
        seen = {}

        def instrument(module):
            module.GC_SETTLE_S = 0.05
            ready, settle = module.QuizApp.on_ready, module.QuizApp._settle_gc

            def on_ready(app):
                seen["collecting_at_first_screen"] = gc.isenabled()
                ready(app)

            def settled(app):
                settle(app)
                seen["collecting_once_settled"] = gc.isenabled()
                app.exit(0)

            module.QuizApp.on_ready, module.QuizApp._settle_gc = on_ready, settled

        class Spy:
            def find_spec(self, name, path=None, target=None):
                if name == "textual.app":
                    seen["textual_imported_collecting"] = gc.isenabled()
                if name != "quizapp.tui.app":
                    return None
                sys.meta_path.remove(self)
                spec = importlib.util.find_spec(name)
                sys.meta_path.insert(0, self)
                run_module = spec.loader.exec_module
                spec.loader.exec_module = lambda module: (run_module(module), instrument(module))
                return spec

        sys.meta_path.insert(0, Spy())
        from quizapp.tui_launch import launch
        seen["exit_code"] = launch()
        seen["collecting_after"] = gc.isenabled()
        print(sorted(seen.items()))
        """)
    env = {"QUIZAPP_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin",
           "TEXTUAL_DRIVER": "textual.drivers.headless_driver:HeadlessDriver"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                            timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == str(sorted({
        "textual_imported_collecting": False, "collecting_at_first_screen": False,
        "collecting_once_settled": True, "exit_code": 0, "collecting_after": True}.items()))


def test_a_pack_edited_after_the_start_is_what_study_loads(tmp_path):
    """Home is drawn from the cached outline; a pack removed before the first study is not studied
    from stale figures: the topic's row is reported gone and home redraws from the bank as it is."""
    script = textwrap.dedent("""
        import os, sys
        from pathlib import Path
        from quizapp.tui.app import QuizApp
        from quizapp.tui.widgets.topiclist import TopicList
        seen = {}
        notes = []

        async def pilot(pilot):
            app = pilot.app
            app.notify = lambda message, **kw: notes.append(message)
            await pilot.pause()
            topics = app.screen.query_one(TopicList)
            seen["rows_before"] = topics.row_count
            Path(os.environ["QUIZAPP_HOME"], "questions", "mine.yaml").unlink()
            topics.highlighted = topics.row_count - 1  # the pack's topic, last in the list
            await pilot.press("enter")
            await pilot.pause()
            seen["screen"] = type(app.screen).__name__
            seen["rows_after"] = topics.row_count
            seen["notes"] = notes
            app.exit(0)

        QuizApp().run(headless=True, size=(100, 32), auto_pilot=pilot)
        print(sorted(seen.items()))
        """)
    home = tmp_path / "home"
    (home / "questions").mkdir(parents=True)
    env = {"QUIZAPP_HOME": str(home), "PATH": "/usr/bin:/bin"}
    warm = "from quizapp.tui.app import QuizApp; QuizApp(exit_after_first_screen=True).run(headless=True)"
    pack = textwrap.dedent("""
        topic: zz-mine
        title: Zz my own topic
        questions:
          - {id: zz-1, type: card, difficulty: 1, prompt: Why?, explanation: Because.}
        """)
    (home / "questions" / "mine.yaml").write_text(pack)
    assert subprocess.run([sys.executable, "-c", warm], env=env, cwd=tmp_path, timeout=120).returncode == 0
    # The cache now holds the outline with the pack's topic; the app below starts from it.
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                            timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    seen = dict(ast.literal_eval(result.stdout.strip().splitlines()[-1]))
    assert seen["screen"] == "HomeScreen" and seen["rows_after"] == seen["rows_before"] - 1
    assert seen["notes"] == ["That topic is no longer in the question bank."]


# -- home follows what changes elsewhere ----------------------------------------------------------


def quizapp_cli(*args: str) -> None:
    """The command line in a process of its own, as the learner runs it beside the app."""
    subprocess.run([sys.executable, "-m", "quizapp", *args], check=True, capture_output=True, timeout=120)


async def test_home_shows_a_limit_set_from_the_command_line_on_its_next_look_and_keeps_the_cursor(
        make_app, monkeypatch):
    monkeypatch.setattr(HomeScreen, "REFRESH_S", 0.1)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        tiles, topics = app.screen.query_one(Tiles), app.screen.query_one(TopicList)
        await pilot.press("down")
        chosen = topics.highlighted_slug
        assert tiles.figures[1] == ("7", "left today")  # the pack's 7 questions, under the default 20
        quizapp_cli("config", "new-per-day", "2")
        await pilot.pause(0.5)
        assert tiles.figures[1] == ("2", "left today")
        assert topics.highlighted_slug == chosen and topics.has_focus


async def test_home_counts_a_card_that_came_due_while_it_was_shown(make_app, monkeypatch):
    monkeypatch.setattr(HomeScreen, "REFRESH_S", 0.1)
    with Store.open() as store:  # Good on a new card: its next learning step is 10 minutes later
        due = record_review(store, pack_bank().questions["sc-single"], rating=3, correct=True, now=NOW)
    clock = [NOW]
    app = make_app(now=lambda: clock[0])
    async with app.run_test(size=SIZE) as pilot:
        tiles = app.screen.query_one(Tiles)
        await pilot.pause(0.3)
        assert tiles.figures[0] == ("0", "cards")
        clock[0] = due  # nothing written anywhere: only time passed
        await pilot.pause(0.5)
        assert tiles.figures[0] == ("1", "cards")


async def test_home_looks_again_when_the_terminal_gets_the_focus_back(make_app, monkeypatch):
    monkeypatch.setattr(HomeScreen, "REFRESH_S", 3600.0)  # the timer is not what redraws here
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        tiles = app.screen.query_one(Tiles)
        app.post_message(events.AppBlur())
        await pilot.pause()
        quizapp_cli("config", "new-per-day", "3")  # in another window
        assert tiles.figures[1] == ("7", "left today")
        app.post_message(events.AppFocus())
        await pilot.pause()
        await pilot.pause()
        assert tiles.figures[1] == ("3", "left today")


async def test_a_look_that_finds_nothing_new_recomputes_and_redraws_nothing(make_app, monkeypatch):
    monkeypatch.setattr(HomeScreen, "REFRESH_S", 0.05)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        computed = []
        stats = app.context.stats
        app.context.stats = lambda: computed.append(1) or stats()
        tiles, topics = app.screen.query_one(Tiles), app.screen.query_one(TopicList)
        drawn = tiles._strips, topics._rows
        await pilot.pause(0.4)  # several looks
        assert computed == []
        assert (tiles._strips, topics._rows) == drawn and tiles._strips is not None


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (100, 32)])
async def test_the_tiles_show_every_word_whole_at_narrow_widths(make_app, write_pack, size):
    """With the shipped exercises (over twenty not started) and a topic list long enough to scroll (a
    scrollbar takes columns too): shorter wordings where the longest do not fit, never a cut word."""
    app = make_app(bank=many_topics(write_pack, 30), catalog=load_catalog())
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        tiles = app.screen.query_one(Tiles)
        lines = ["".join(segment.text for segment in tiles.render_line(y)) for y in range(4)]
        assert not any("…" in line for line in lines), "\n".join(lines)
        for title, figure, caption in tiles.shown():
            assert title in lines[0] and figure in lines[1] and caption in lines[2]
        exercises = tiles.shown()[3][2]
        assert exercises.endswith("not started" if size[0] >= 80 else "to go"), exercises


def test_fit_tiles_shortens_the_widest_tile_first_and_clips_only_when_nothing_fits():
    tiles = [(("Due now", "Due"), ("42",), ("21 by checks", "21 checks")), (("New",), ("7",), ("left today", "today")),
             (("Exercises",), ("2 due · 3 passed",), ("3 attempted · 23 not started", "3 tried · 23 to go"))]
    assert fit_tiles(100, (1, 1, 2), tiles) == ([25, 25, 50], [0, 0, 0])  # all fit: shared by weight
    boxes, chosen = fit_tiles(58, (1, 1, 2), tiles)
    assert sum(boxes) == 58 and chosen == [0, 0, 1]  # the exercises' caption, the widest, shortened alone
    assert all(max(len(pick(t, c)[0]) + 5, *(len(w) + 4 for w in pick(t, c)[1:])) <= box
               for t, c, box in zip(tiles, chosen, boxes))
    boxes, chosen = fit_tiles(30, (1, 1, 2), tiles)
    assert boxes == [7, 8, 15] and chosen == [1, 1, 1]  # nothing fits: the shortest, by weight (clipped)
