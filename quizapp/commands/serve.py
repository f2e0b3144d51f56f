"""`quizapp serve`: the app in the browser (quizapp.web), one app process per tab."""

from __future__ import annotations

import os
import socket
import sys
import threading
import webbrowser

import click

from quizapp import paths
from quizapp.web.server import QuizServer, app_argv, is_loopback
from quizapp.web.session import clean_environment


def serve(port: int, host: str, max_sessions: int, idle_minutes: float, no_browser: bool, unix_socket: str | None,
          behind_proxy: bool) -> int:
    if behind_proxy and not unix_socket and not is_loopback(host):
        click.echo("quizapp serve: --behind-proxy turns the token off; use it with --unix-socket or on loopback",
                   err=True)
        return 2
    data = paths.data_dir()
    work = data / "work"  # the tabs' exercise files, and where an import is looked for
    try:
        work.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        click.echo(f"quizapp serve: cannot make {work}: {exc.strerror or exc}", err=True)
        return 2
    env = clean_environment(os.environ, str(data))
    server = QuizServer(app_argv(sys.executable), env, host=host, port=port, max_sessions=max_sessions,
                        idle_s=idle_minutes * 60, behind_proxy=behind_proxy, unix_socket=unix_socket,
                        work_dir=str(work))
    try:
        server.bind()
    except OSError as exc:
        click.echo(f"quizapp serve: cannot listen on {host}:{port}: {exc.strerror or exc}", err=True)
        return 2
    if unix_socket:
        click.echo(f"quizapp serve: on {unix_socket}, behind a proxy; {max_sessions} sessions at most")
    else:
        if not is_loopback(host):
            click.echo(f"quizapp serve: warning: listening on {host}, reachable from other machines. Anyone with "
                       "the link below can study as you and run code on this machine through the exercises: "
                       "share it with no one, and prefer an SSH tunnel (docs/serve.md).", err=True)
        click.echo(f"quizapp in your browser: {server.url}")
        if host in ("0.0.0.0", "::"):
            click.echo(f"  from another machine: http://{socket.gethostname()}:{server.port}/?token={server.token}")
        click.echo(f"  {max_sessions} tabs at most, each closed after {idle_minutes:g} minutes without input; "
                   f"progress in {data}, exercise files in {work}.")
        click.echo("  Ctrl+C stops the server.")
        if not no_browser:
            threading.Thread(target=webbrowser.open, args=(server.url,), daemon=True).start()
    server.run()
    return 0
