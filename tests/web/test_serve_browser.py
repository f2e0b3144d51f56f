"""`quizapp serve` in a real browser: Debian's Chromium, driven by Playwright (no browser download).

The page draws the app on a canvas, so these tests assert on what can be seen (a screenshot that is
not blank, the page's state) and on what is stored (the progress store, the app processes)."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from servehelp import AppOutput, colours, descendants, start, wait_for

from quizapp.bank.load import load_bank
from quizapp.study.store import Store

CHROMIUM = os.environ.get("QUIZAPP_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - the test extras install it
    sync_playwright = None

pytestmark = [
    pytest.mark.skipif(sync_playwright is None, reason="Playwright is not installed (pip install -e '.[test]')"),
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium here (Debian: apt install chromium; or QUIZAPP_CHROMIUM)"),
]
FIRST_SCREEN_S = 60


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        try:
            chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        except Exception as exc:  # noqa: BLE001 - a Chromium that cannot start here is no Chromium to test with
            pytest.skip(f"{CHROMIUM} did not start: {str(exc).splitlines()[0]}")
        yield chromium
        chromium.close()


@pytest.fixture
def served(tmp_path):
    server = start(tmp_path / "home", "--max-sessions", "2")
    yield server
    server.stop()


HOME_SCREEN = "Mastery per topic"  # words of the app's first screen


def open_app(browser, served):
    """A tab on the app, its first screen drawn: (context, page, what the app writes to the page)."""
    context = browser.new_context(viewport={"width": 1200, "height": 760}, accept_downloads=True)
    page = context.new_page()
    output = AppOutput(page)
    page.goto(served.url)
    assert output.wait_for(HOME_SCREEN, timeout=FIRST_SCREEN_S), "the first screen was drawn"
    page.locator(".xterm-helper-textarea").focus()  # keys to the terminal (a click would pick a row)
    return context, page, output


def test_the_link_opens_the_app_and_closing_the_tab_ends_it(browser, served):
    before = served.apps()
    context, page, output = open_app(browser, served)
    (app,) = wait_for(lambda: served.apps(), 20)
    assert before == [] and app
    assert colours(page.screenshot()) > 20, "the page is not blank"
    output.press("x")  # the exercises
    since = output.mark()
    page.keyboard.press("Enter")  # the first one: its screen starts the tab's warm grader
    assert output.wait_for("Your file:", since)
    assert wait_for(lambda: len(descendants(app)) >= 1, 60), "the tab's warm grader started"
    tree = descendants(app) | {app}
    context.close()
    assert wait_for(lambda: not any(Path(f"/proc/{pid}").exists() and pid in descendants(served.proc.pid)
                                    for pid in tree), 20), "the tab's app and what it started end with the tab"
    assert served.apps() == []


def test_without_the_link_the_page_is_refused(browser, served):
    context = browser.new_context()
    page = context.new_page()
    response = page.goto(served.base + "/")
    assert response.status == 403 and "needs its link" in page.content()
    context.close()
    assert served.apps() == []


def test_a_page_of_another_origin_cannot_open_a_session(browser, served, tmp_path):
    """A page the learner visits on another origin (here another port of 127.0.0.1, the same site, so the
    browser even sends the cookie) tries to open the app's websocket: refused, no app starts."""
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "index.html").write_text("<html><body>elsewhere</body></html>")
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path / "www"), **k)  # noqa: E731
    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        context, page, _ = open_app(browser, served)  # the learner has the app open: the cookie is set
        wait_for(lambda: len(served.apps()) == 1, 20)
        evil = context.new_page()
        evil.goto(f"http://127.0.0.1:{other.server_address[1]}/")
        outcome = evil.evaluate("""url => new Promise(done => {
            const ws = new WebSocket(url);
            ws.onopen = () => done("open");
            ws.onerror = () => done("refused");
        })""", f"ws://127.0.0.1:{served.port}/ws")
        assert outcome == "refused"
        time.sleep(1)
        assert len(served.apps()) == 1, "no second app was started"
        context.close()
    finally:
        other.shutdown()


def test_keys_typed_in_the_page_answer_a_question_and_it_is_stored(browser, served, monkeypatch):
    monkeypatch.setenv("QUIZAPP_HOME", str(served.home))
    context, page, output = open_app(browser, served)
    since = output.mark()
    page.keyboard.press("r")  # a review session; its first question may be of any type
    assert output.wait_for("1 of ", since), "the review's first question is shown"
    # Keys that answer any type: Enter checks an order or reveals a card (a choice or an empty input
    # is refused); "1" picks choice 1, types 1 into an input or rates a card Again; Enter checks;
    # Enter saves the rating.
    for key in ("Enter", "1", "Enter", "Enter"):
        output.press(key)
    with Store.open() as store:
        answered = wait_for(lambda: store.answers(), 20)
        assert len(answered) == 1
        (row,) = answered
    assert row["question_id"] in load_bank().questions and row["rating"] in (1, 2, 3, 4)
    context.close()


def test_an_export_reaches_the_browser_as_a_download_of_progress_json(browser, served, tmp_path):
    context, page, output = open_app(browser, served)
    downloads = []

    def got(download) -> None:
        downloads.append(download)

    context.on("page", lambda popup: popup.on("download", got))  # textual.js opens it in a new tab
    page.on("download", got)
    since = output.mark()
    page.keyboard.press("Control+p")
    assert output.wait_for("Search for commands", since), "the command palette opened"
    since = output.mark()
    page.keyboard.type("Export progress")
    assert output.wait_for("Download all your progress", since), "the palette offers the export as a download"
    page.keyboard.press("Enter")
    for _ in range(300):  # Playwright's sync API hears events only while it waits itself
        if downloads:
            break
        page.wait_for_timeout(100)
    assert downloads, "a download started"
    saved = tmp_path / "got.json"
    downloads[0].save_as(saved)
    document = json.loads(saved.read_text())
    assert downloads[0].suggested_filename == "quizapp-progress.json"
    assert {"answers", "grades", "interviews"} <= set(document)
    context.close()


def test_the_session_cap_holds_in_the_browser(browser, served):
    contexts = [open_app(browser, served)[0] for _ in range(2)]
    assert wait_for(lambda: len(served.apps()) == 2, 20)
    third = browser.new_context()
    page = third.new_page()
    response = page.goto(served.url)
    assert response.status == 503 and "Every session is in use" in page.content()
    assert len(served.apps()) == 2
    for context in (*contexts, third):
        context.close()


def test_an_idle_tab_is_ended(browser, tmp_path):
    served = start(tmp_path / "home", "--idle-minutes", "0.05")  # 3 s
    try:
        context, page, _ = open_app(browser, served)
        assert wait_for(lambda: len(served.apps()) == 1, 20)
        assert wait_for(lambda: served.apps() == [], 30), "the idle session's app was ended"
        page.wait_for_selector("body.-closed", state="attached", timeout=10_000)  # the page says so
        context.close()
    finally:
        served.stop()
