"""`quizapp hint`: Markdown on a terminal, plain text in a pipe, and hint progress kept in the store,
shared with the app (Store.hints_shown / set_hints_shown)."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys

from click.testing import CliRunner

from quizapp.catalog import load_catalog
from quizapp.cli import cli
from quizapp.study.store import Store

LORA = load_catalog()["lora"]


def hint(*args: str):
    return CliRunner().invoke(cli, ["hint", *args], catch_exceptions=False)


def shown_number(output: str) -> int:
    return int(re.search(r"Hint (\d+)/", output).group(1))


# -- the store ---------------------------------------------------------------------------------

def test_hints_shown_starts_at_zero_and_never_goes_down():
    with Store.open() as store:
        assert store.hints_shown("lora") == 0
        store.set_hints_shown("lora", 2)
        assert store.hints_shown("lora") == 2
        store.set_hints_shown("lora", 1)  # an older view showing fewer must not forget what was seen
        store.set_hints_shown("lora", 0)
        assert store.hints_shown("lora") == 2
        store.set_hints_shown("lora", 4)
        assert store.hints_shown("lora") == 4
        assert store.setting("hints_shown:lora") == 4  # the settings table, under its documented key
        assert store.hints_shown("amp_training") == 0  # per exercise


def test_hints_shown_is_seen_by_another_connection(quizapp_home):
    with Store.open() as store:
        store.set_hints_shown("lora", 3)
    code = ("from quizapp.study.store import Store\n"
            "with Store.open() as s:\n"
            "    s.set_hints_shown('lora', 2)\n"  # lower: ignored
            "    print(s.hints_shown('lora'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "QUIZAPP_HOME": str(quizapp_home)})
    assert out.stdout.strip() == "3", out.stderr
    with Store.open() as store:
        assert store.hints_shown("lora") == 3


# -- the CLI -----------------------------------------------------------------------------------

def test_next_hint_counts_in_the_store():
    assert shown_number(hint("lora").output) == 1
    assert shown_number(hint("lora").output) == 2
    with Store.open() as store:
        assert store.hints_shown("lora") == 2


def test_next_hint_continues_from_what_the_app_showed():
    with Store.open() as store:
        store.set_hints_shown("lora", 3)  # as the app's exercise screen does
    result = hint("lora")
    assert shown_number(result.output) == 4
    assert LORA.hints[3] in result.output


def test_a_numbered_hint_counts_as_seen_but_never_lowers_the_count():
    hint("lora", "3")
    with Store.open() as store:
        assert store.hints_shown("lora") == 3
    hint("lora", "1")
    with Store.open() as store:
        assert store.hints_shown("lora") == 3
    assert shown_number(hint("lora").output) == 4


def test_the_last_hint_repeats_once_all_were_seen():
    n = len(LORA.hints)
    with Store.open() as store:
        store.set_hints_shown("lora", n)
    assert shown_number(hint("lora").output) == n


def test_progress_counted_in_the_old_hints_file_is_kept(quizapp_home):
    old = quizapp_home / "hints" / "lora"
    old.parent.mkdir(parents=True)
    old.write_text("2")
    assert shown_number(hint("lora").output) == 3


def test_the_valid_range_names_hint_0():
    result = CliRunner().invoke(cli, ["hint", "lora", str(len(LORA.hints) + 1)])
    assert result.exit_code == 2
    assert f"lora has hints 0 (the statement) to {len(LORA.hints)}" in result.output


def test_piped_output_is_the_markdown_as_written():
    result = hint("lora", "0")
    assert result.output == LORA.statement + "\n"
    assert "**Why.**" in result.output  # scripts get the source


def test_piped_hint_is_one_plain_line():
    result = hint("lora", "2")
    assert result.output.splitlines()[0] == f"Hint 2/{len(LORA.hints)}: {LORA.hints[1]}"


def on_a_terminal(*args: str, home) -> str:
    """Run `quizapp ARGS` with stdout on a pseudo-terminal; its output without colour codes."""
    leader, follower = pty.openpty()
    env = {**os.environ, "QUIZAPP_HOME": str(home), "COLUMNS": "200", "TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-m", "quizapp", *args], stdout=follower, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    text = b"".join(chunks).decode("utf-8", "replace")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def test_the_statement_is_rendered_on_a_terminal(quizapp_home):
    out = on_a_terminal("hint", "lora", "0", home=quizapp_home)
    assert "Why." in out and "Initialisation." in out
    assert "**" not in out and "```" not in out and "`LoRALinear`" not in out
    assert "class LoRALinear(nn.Module):" in out  # the code block's text is kept


def test_a_hint_is_rendered_on_a_terminal(quizapp_home):
    out = on_a_terminal("hint", "lora", "2", home=quizapp_home)
    assert f"Hint 2/{len(LORA.hints)}:" in out
    assert "`" not in out and "requires_grad_(False)" in out
