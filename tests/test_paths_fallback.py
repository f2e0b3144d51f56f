"""quizapp.paths without platformdirs: its own rules give the folders platformdirs gives, so a learner's
progress stays where it was whether the package is installed or not, and QUIZAPP_HOME still wins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest

from quizapp import paths

ROOT = Path(__file__).resolve().parents[1]

# The environments the fallback has to read as platformdirs does: the XDG variables absolute, unset,
# empty, and relative (which platformdirs ignores).
XDG_CASES = {
    "xdg-absolute": lambda tmp: {"XDG_DATA_HOME": str(tmp / "xdg-data"), "XDG_CACHE_HOME": str(tmp / "xdg-cache")},
    "xdg-unset": lambda tmp: {},
    "xdg-empty": lambda tmp: {"XDG_DATA_HOME": "", "XDG_CACHE_HOME": ""},
    "xdg-relative": lambda tmp: {"XDG_DATA_HOME": "rel/data", "XDG_CACHE_HOME": "rel/cache"},
}


@pytest.fixture
def fresh_env(monkeypatch, tmp_path):
    """No QUIZAPP_HOME, no XDG variables, and a HOME of the test's own: nothing here can name the
    learner's real folders."""
    monkeypatch.delenv(paths.HOME_ENV, raising=False)
    for name in ("XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    if sys.platform == "win32":
        monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "localappdata"))
    return tmp_path


def hide_platformdirs(monkeypatch):
    # A None entry in sys.modules makes `import platformdirs` raise ImportError, as on a machine without it.
    monkeypatch.setitem(sys.modules, "platformdirs", None)


@pytest.mark.parametrize("case", list(XDG_CASES))
def test_the_fallback_gives_platformdirs_folders_on_this_machine(monkeypatch, fresh_env, case):
    for name, value in XDG_CASES[case](fresh_env).items():
        monkeypatch.setenv(name, value)
    expected_data = Path(platformdirs.user_data_dir(paths.APP_NAME, appauthor=False))
    expected_cache = Path(platformdirs.user_cache_dir(paths.APP_NAME, appauthor=False))
    hide_platformdirs(monkeypatch)
    with pytest.raises(ImportError):
        import platformdirs as _  # noqa: F401 - proves it is hidden
    assert paths.data_dir() == expected_data
    assert paths.cache_dir() == expected_cache
    assert paths.db_path() == expected_data / "progress.sqlite3"
    assert not expected_data.exists() and not expected_cache.exists()  # a path is worked out, nothing made


def test_quizapp_home_still_wins_without_platformdirs(monkeypatch, fresh_env):
    monkeypatch.setenv("XDG_DATA_HOME", str(fresh_env / "xdg-data"))
    monkeypatch.setenv(paths.HOME_ENV, str(fresh_env / "mine"))
    hide_platformdirs(monkeypatch)
    assert paths.data_dir() == fresh_env / "mine"
    assert paths.cache_dir() == fresh_env / "mine" / "cache"
    assert paths.user_questions_dir() == fresh_env / "mine" / "questions"


@pytest.mark.skipif(sys.platform == "win32", reason="platformdirs' macOS rules are compared on a POSIX machine")
@pytest.mark.parametrize("case", list(XDG_CASES))
def test_the_macos_rules_agree_with_platformdirs(monkeypatch, fresh_env, case):
    macos = pytest.importorskip("platformdirs.macos")
    env = XDG_CASES[case](fresh_env)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    mac = macos.MacOS(paths.APP_NAME, appauthor=False)
    assert paths.fallback_dir("data", platform="darwin", environ=env) == Path(mac.user_data_dir)
    assert paths.fallback_dir("cache", platform="darwin", environ=env) == Path(mac.user_cache_dir)


def test_the_windows_rules():
    # platformdirs asks the Windows shell for the folder, which this check cannot do off Windows; its
    # default (roaming=False) is the local AppData, with "Cache" inside the app's folder for the cache.
    env = {"LOCALAPPDATA": "C:/Users/ada/AppData/Local", "APPDATA": "C:/Users/ada/AppData/Roaming",
           "XDG_DATA_HOME": "/ignored/on/windows"}
    assert paths.fallback_dir("data", platform="win32", environ=env) == Path("C:/Users/ada/AppData/Local/quizapp")
    assert paths.fallback_dir("cache", platform="win32", environ=env) == Path(
        "C:/Users/ada/AppData/Local/quizapp/Cache")
    assert paths.fallback_dir("data", platform="win32", environ={}) == Path.home() / "AppData" / "Local" / "quizapp"


def test_the_linux_rules_without_xdg():
    assert paths.fallback_dir("data", platform="linux", environ={}) == Path.home() / ".local" / "share" / "quizapp"
    assert paths.fallback_dir("cache", platform="linux", environ={}) == Path.home() / ".cache" / "quizapp"
    with pytest.raises(ValueError):
        paths.fallback_dir("config")


# A fresh interpreter in which platformdirs cannot be imported at all, before quizapp is: proves no
# import of quizapp.paths (or of what it imports) needs the package.
WITHOUT_PLATFORMDIRS = """
import json, sys
sys.modules["platformdirs"] = None
from quizapp import paths
print(json.dumps({"data": str(paths.data_dir()), "cache": str(paths.cache_dir()),
                  "loaded": sorted(m for m in sys.modules if m.startswith("platformdirs") and sys.modules[m])}))
"""


def run_without_platformdirs(env: dict) -> dict:
    done = subprocess.run([sys.executable, "-c", WITHOUT_PLATFORMDIRS], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_a_fresh_interpreter_without_platformdirs_agrees(fresh_env):
    env = {k: v for k, v in os.environ.items() if k != paths.HOME_ENV}
    found = run_without_platformdirs(env)
    assert found["loaded"] == []
    assert Path(found["data"]) == Path(platformdirs.user_data_dir(paths.APP_NAME, appauthor=False))
    assert Path(found["cache"]) == Path(platformdirs.user_cache_dir(paths.APP_NAME, appauthor=False))
    mine = run_without_platformdirs({**env, paths.HOME_ENV: str(fresh_env / "mine")})
    assert Path(mine["data"]) == fresh_env / "mine" and Path(mine["cache"]) == fresh_env / "mine" / "cache"
