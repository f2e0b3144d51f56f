"""`quizapp serve`'s server: textual-serve's, wrapped in what a server on a laptop needs.

textual-serve (aiohttp; one app process per tab over a websocket) is used as it is for the page's
terminal, the websocket protocol and downloads. Around it:

- **A secret per launch.** Every request needs it: in the URL the server prints (`?token=`), which
  sets an HttpOnly, SameSite=Strict cookie and redirects to the bare path, or in that cookie.
  Without it: 403, and no app starts.
- **The websocket's Origin** must be this page's own (same scheme, host and port as the request's
  Host): a page on another site that the learner visits cannot open a session and send keys, even
  though the browser would let it try. And on loopback, the Host must be a loopback name: a DNS
  name rebound to 127.0.0.1 is refused.
- **Bounds.** At most `max_sessions` app processes (a further tab gets a page saying so); each
  ended after `idle_s` without input, and when its tab closes (session.AppSession.stop).
- **Behind a proxy** (JupyterHub's jupyter-server-proxy, on a private Unix socket): the hub has
  authenticated the user and checked the Origin, and the socket is the user's own; the page's
  URLs are relative, so they work under the proxy's path prefix.

textual-serve's own page is not used: ours loads nothing from other sites, derives the websocket's
URL from the page's (so it works through an SSH tunnel or a proxy), and sends downloads to the
page-relative path.
"""

from __future__ import annotations

import asyncio
import hmac
import html
import logging
import secrets
import signal
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp_jinja2
import jinja2
import textual_serve
from aiohttp import web
from textual_serve.server import Server, to_int

from quizapp.web.session import AppSession

log = logging.getLogger("quizapp.serve")
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
IDLE_CHECK_S = 15.0
TEMPLATES = Path(__file__).resolve().parent / "templates"
STATICS = Path(textual_serve.__file__).resolve().parent / "static"


def is_loopback(host: str) -> bool:
    return host in LOOPBACK_NAMES or host.startswith("127.")


def new_token() -> str:
    return secrets.token_urlsafe(24)


def _page(status: int, title: str, text: str) -> web.Response:
    body = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>quizapp: {html.escape(title)}</title>"
            "<style>body{background:#0c181f;color:#e6edf3;font:16px/1.5 monospace;margin:12vh auto;max-width:42em;"
            "padding:0 1em}h1{font-size:1.3em}</style></head>"
            f"<body><h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></body></html>")
    return web.Response(status=status, text=body, content_type="text/html")


class QuizServer(Server):
    """Serve the app to browser tabs; see the module's docstring for what guards it."""

    def __init__(self, argv: list[str], env: dict[str, str], *, host: str = "127.0.0.1", port: int = 0,
                 token: str | None = None, max_sessions: int = 4, idle_s: float = 1800.0,
                 behind_proxy: bool = False, unix_socket: str | None = None, work_dir: str | None = None):
        super().__init__("quizapp", host=host, port=port, title="quizapp", statics_path=STATICS,
                         templates_path=TEMPLATES)
        self.argv = argv
        self.app_env = env
        self.token = token or new_token()
        self.max_sessions = max_sessions
        self.idle_s = idle_s
        self.behind_proxy = behind_proxy
        self.unix_socket = unix_socket
        self.work_dir = work_dir  # every app's working folder: where its exercise files are written
        self.sessions: set[AppSession] = set()
        self.cookie_name = f"quizapp-token-{port}"
        self._idle_task: asyncio.Task | None = None
        self._sock: socket.socket | None = None

    # -- the address --------------------------------------------------------------------------

    def bind(self) -> None:
        """Take the port now (a free one for port 0), so that the URL printed is the one served."""
        if self.unix_socket:
            return
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        sock.listen(128)
        self._sock = sock
        self.port = sock.getsockname()[1]
        self.cookie_name = f"quizapp-token-{self.port}"
        # A wildcard address is no address to open: this machine reaches it on loopback.
        shown = {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(self.host) or (
            f"[{self.host}]" if ":" in self.host else self.host)
        self.public_url = f"http://{shown}:{self.port}"

    @property
    def url(self) -> str:
        """What the learner opens: the address with the secret."""
        return f"{self.public_url}/?token={self.token}"

    # -- the application ----------------------------------------------------------------------

    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        app.add_routes([
            web.get("/", self.handle_index, name="index"),
            web.get("/ws", self.handle_websocket, name="websocket"),
            web.get("/download/{key}", self.handle_download, name="download"),
            web.static("/static", self.statics_path, name="static"),  # no folder listings
        ])
        app.on_startup.append(self.on_startup)
        app.on_shutdown.append(self.on_shutdown)
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler):
        if not self.behind_proxy:
            if is_loopback(self.host) and (request.url.host or "") not in LOOPBACK_NAMES:
                return _page(403, "Unknown host", "This server answers to 127.0.0.1 and localhost only.")
            given = request.query.get("token")
            if given is not None and hmac.compare_digest(given, self.token):
                if request.path == "/":  # keep the secret out of the address bar and the history
                    response = web.HTTPFound("/")
                    self._set_cookie(response)
                    raise response
            elif not hmac.compare_digest(request.cookies.get(self.cookie_name, ""), self.token):
                return _page(403, "This page needs its link",
                             "Open the link that `quizapp serve` printed (it carries a secret for this launch). "
                             "Started the server again? Its new link has a new secret.")
        if request.path == "/ws" and not self.behind_proxy and not self._same_origin(request):
            log.warning("refused a websocket from origin %r", request.headers.get("Origin"))
            return _page(403, "Refused", "A session can only be opened from this server's own page.")
        response = await handler(request)
        if not self.behind_proxy and request.query.get("token") and isinstance(response, web.StreamResponse) \
                and not response.prepared:
            self._set_cookie(response)
        return response

    def _set_cookie(self, response: web.StreamResponse) -> None:
        response.set_cookie(self.cookie_name, self.token, httponly=True, samesite="Strict", path="/")

    @staticmethod
    def _same_origin(request: web.Request) -> bool:
        origin = request.headers.get("Origin")
        if not origin:
            return False  # every browser sends one with a websocket
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and parts.netloc.lower() == (request.host or "").lower()

    async def handle_index(self, request: web.Request) -> web.Response:
        if len(self.sessions) >= self.max_sessions:
            return self._full_page()
        context = {"font_size": to_int(request.query.get("fontsize", "16"), 16), "title": self.title}
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    def _full_page(self) -> web.Response:
        return _page(503, "Every session is in use",
                     f"This server runs at most {self.max_sessions} app sessions at once, and all are open "
                     "(another tab or window). Close one, then reload this page.")

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        if len(self.sessions) >= self.max_sessions:
            return self._full_page()
        websocket = web.WebSocketResponse(heartbeat=15)
        width = min(max(to_int(request.query.get("width", "80"), 80), 20), 500)
        height = min(max(to_int(request.query.get("height", "24"), 24), 8), 300)
        session: AppSession | None = None
        try:
            await websocket.prepare(request)
            session = AppSession(self.argv, self.app_env, cwd=self.work_dir, write_bytes=websocket.send_bytes,
                                 write_str=websocket.send_str, close=websocket.close,
                                 download_manager=self.download_manager)
            self.sessions.add(session)
            await session.start(width, height)
            await self._process_messages(websocket, session)
        except asyncio.CancelledError:
            pass
        except Exception:  # noqa: BLE001 - a bad message from one tab ends that tab's session only
            log.exception("a session ended on an error")
        finally:
            if session is not None:
                await session.stop()
                self.sessions.discard(session)
            if not websocket.closed:
                await websocket.close()
        return websocket

    # -- life ---------------------------------------------------------------------------------

    async def on_startup(self, app: web.Application) -> None:
        self._idle_task = asyncio.create_task(self._end_idle_sessions())

    async def on_shutdown(self, app: web.Application) -> None:
        if self._idle_task is not None:
            self._idle_task.cancel()
        await asyncio.gather(*(s.stop() for s in list(self.sessions)), return_exceptions=True)

    async def _end_idle_sessions(self) -> None:
        while True:
            await asyncio.sleep(min(IDLE_CHECK_S, max(self.idle_s / 4, 0.5)))
            now = time.monotonic()
            for session in list(self.sessions):
                if now - session.last_input > self.idle_s and not session.stopping:
                    log.info("ending a session idle for %.0f s", now - session.last_input)
                    asyncio.create_task(self._end(session))

    async def _end(self, session: AppSession) -> None:
        await session.stop()
        try:
            await session.remote_close()
        except Exception:  # noqa: BLE001 - the tab may be gone already
            pass

    def run(self) -> None:
        """Serve until SIGINT or SIGTERM."""
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self.request_exit)
            except NotImplementedError:  # Windows' event loops: Ctrl+C still ends run_app
                pass
        if self.unix_socket:
            web.run_app(self._make_app(), path=self.unix_socket, handle_signals=False, loop=loop, print=None,
                        access_log=None)
        else:
            web.run_app(self._make_app(), sock=self._sock, handle_signals=False, loop=loop, print=None,
                        access_log=None)


def app_argv(python: str) -> list[str]:
    """The app, as every tab runs it."""
    return [python, "-m", "quizapp"]
