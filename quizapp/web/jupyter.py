"""The entry point jupyter-server-proxy looks for (`jupyter_serverproxy_servers` in pyproject.toml):
on a JupyterHub, each user's own Jupyter server starts `quizapp serve` behind the hub's login.

The server listens on a Unix socket in a folder that jupyter-server-proxy makes for the user alone,
so no other user of the machine can reach it, and the hub has authenticated whoever comes through:
no token then, and the page's addresses are relative to the proxy's path. The app's progress
store is the user's own (their home's data folder, or QUIZAPP_HOME where the hub's spawner sets it).
"""

from __future__ import annotations

import sys


def setup_quizapp() -> dict:
    return {
        "command": [sys.executable, "-m", "quizapp", "serve", "--unix-socket", "{unix_socket}", "--behind-proxy",
                    "--no-browser"],
        "unix_socket": True,
        "timeout": 60,  # the first start builds the bank's cache
        "new_browser_tab": True,
        "launcher_entry": {"enabled": True, "title": "quizapp"},
    }
