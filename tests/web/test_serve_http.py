"""`quizapp serve` without a browser: the secret, the Origin, the Host, the session cap and the
environment the tabs get, driven with aiohttp's client (the server's own HTTP library)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import pytest
from click.testing import CliRunner
from servehelp import start, wait_for

from quizapp.cli import cli
from quizapp.web.jupyter import setup_quizapp
from quizapp.web.session import clean_environment


@pytest.fixture
def served(tmp_path):
    server = start(tmp_path / "home", "--max-sessions", "1")
    yield server
    server.stop()


def status(url: str, **kwargs) -> int:
    async def go():
        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
            async with http.get(url, allow_redirects=False, **kwargs) as response:
                return response.status

    return asyncio.run(go())


def open_ws(served, origin: str | None, cookie: bool = True):
    """Open the app's websocket as a page of `origin` would; the handshake's status, and the first
    message when it opened."""
    async def go():
        headers = {"Origin": origin} if origin else {}
        async with aiohttp.ClientSession(cookies=served.cookie if cookie else None) as http:
            try:
                async with http.ws_connect(f"{served.base}/ws?width=80&height=24", headers=headers) as ws:
                    message = await ws.receive(timeout=30)
                    return 101, message
            except aiohttp.WSServerHandshakeError as exc:
                return exc.status, None

    return asyncio.run(go())


def test_every_page_needs_the_secret(served):
    assert status(f"{served.base}/") == 403
    assert status(f"{served.base}/?token=wrong") == 403
    assert status(f"{served.base}/static/js/textual.js") == 403
    assert status(f"{served.base}/download/anything") == 403
    assert status(f"{served.base}/?token={served.token}") == 302  # to the bare path, with the cookie
    assert status(f"{served.base}/", cookies=served.cookie) == 200
    assert status(f"{served.base}/static/js/textual.js", cookies=served.cookie) == 200
    assert status(f"{served.base}/static/", cookies=served.cookie) == 403  # no folder listings
    # A DNS name rebound to 127.0.0.1 is not this server, even with the secret.
    assert status(f"{served.base}/", cookies=served.cookie, headers={"Host": f"evil.example:{served.port}"}) == 403
    logged = [line for line in served.log if "in your browser:" not in line]  # the link is printed once
    assert not any(served.token in line for line in logged), "the secret is never logged"


def test_a_foreign_origin_starts_no_app_and_the_own_one_does(served):
    assert open_ws(served, "https://evil.example")[0] == 403
    assert open_ws(served, f"http://127.0.0.1:{served.port + 1}")[0] == 403  # same site, other origin
    assert open_ws(served, None)[0] == 403
    assert open_ws(served, served.base, cookie=False)[0] == 403
    assert served.apps() == []
    code, message = open_ws(served, served.base)
    assert code == 101 and message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT)
    assert wait_for(lambda: served.apps() == [], 20), "the app ends with its websocket"


def test_a_tab_over_the_cap_gets_a_page_saying_so(served):
    async def go():
        async with aiohttp.ClientSession(cookies=served.cookie) as http:
            async with http.ws_connect(f"{served.base}/ws", headers={"Origin": served.base}) as ws:
                await ws.receive(timeout=30)  # the first session is up
                async with http.get(f"{served.base}/") as page:
                    return page.status, await page.text(), len(served.apps())

    code, text, apps = asyncio.run(go())
    assert code == 503 and "Every session is in use" in text and "at most 1 app sessions" in text
    assert apps == 1


def test_the_tabs_get_a_clean_environment(tmp_path):
    source = {"PATH": "/usr/bin", "HOME": "/home/a", "LANG": "en_GB.UTF-8", "LC_ALL": "C", "QUIZAPP_NO_BWRAP": "1",
              "AWS_SECRET_ACCESS_KEY": "x", "SSH_AUTH_SOCK": "/tmp/agent", "GITHUB_TOKEN": "y",
              "QUIZAPP_HOME": "/elsewhere"}
    env = clean_environment(source, str(tmp_path))
    assert env["QUIZAPP_HOME"] == str(tmp_path)
    assert {"PATH", "HOME", "LANG", "LC_ALL", "QUIZAPP_NO_BWRAP"} <= set(env)
    assert not {"AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "GITHUB_TOKEN"} & set(env)


def test_an_app_process_has_only_the_clean_environment(served):
    async def go():
        async with aiohttp.ClientSession(cookies=served.cookie) as http:
            async with http.ws_connect(f"{served.base}/ws", headers={"Origin": served.base}) as ws:
                await ws.receive(timeout=30)
                (pid,) = served.apps()
                return dict(item.split("=", 1) for item in
                            Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in item), \
                    Path(f"/proc/{pid}/cwd").resolve()

    env, cwd = asyncio.run(go())
    assert "SECRET_OF_THE_SERVER" not in env and env["QUIZAPP_HOME"] == str(served.home)
    assert env["TEXTUAL_DRIVER"].endswith("WebDriver")
    assert cwd == (served.home / "work").resolve(), "a tab's exercise files go to the data folder"


def test_another_host_warns_and_still_asks_for_the_secret(tmp_path):
    server = start(tmp_path / "home", "--host", "0.0.0.0")
    try:
        assert any("warning: listening on 0.0.0.0, reachable from other machines" in line for line in server.log)
        assert wait_for(lambda: any("from another machine: http://" in line for line in server.log), 10)
        assert status(f"{server.base}/") == 403
        assert status(f"{server.base}/?token={server.token}") == 302
        assert open_ws(server, "https://evil.example")[0] == 403
    finally:
        server.stop()


def test_a_port_taken_is_a_clear_error(served):
    result = CliRunner().invoke(cli, ["serve", "--no-browser", "--port", str(served.port)])
    assert result.exit_code == 2 and "cannot listen on 127.0.0.1" in result.output


def test_jupyter_server_proxy_starts_it_on_a_private_socket():
    config = setup_quizapp()
    assert config["unix_socket"] is True
    command = config["command"]
    assert command[1:4] == ["-m", "quizapp", "serve"] and "{unix_socket}" in command and "--behind-proxy" in command
    json.dumps(config)  # plain data, as the entry point must return


def test_behind_a_proxy_on_a_unix_socket(tmp_path):
    import subprocess
    import sys

    sock = tmp_path / "quizapp.sock"
    proc = subprocess.Popen([sys.executable, "-m", "quizapp", "serve", "--unix-socket", str(sock), "--behind-proxy",
                             "--no-browser"], env={**__import__("os").environ, "QUIZAPP_HOME": str(tmp_path / "h")},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(sock.exists, 30)

        async def go():
            connector = aiohttp.UnixConnector(path=str(sock))
            async with aiohttp.ClientSession(connector=connector) as http:
                async with http.get("http://proxied/") as page:
                    return page.status, await page.text()

        code, text = asyncio.run(go())
        assert code == 200 and 'src="static/js/textual.js"' in text  # relative: works under the proxy's prefix
    finally:
        proc.terminate()
        proc.wait(timeout=15)
