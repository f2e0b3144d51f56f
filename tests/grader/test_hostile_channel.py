"""Issue 23, the result channel: a solution cannot forge, replay or replace the child's report, cold
or warm, in `grade --json`, `grade --events` and `watch`. The parent accepts one signed event
stream, in order; anything else voids the grade (an error that says the channel was tampered with)."""

from __future__ import annotations

import hashlib
import hmac
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from gradeutil import grade_many
from warmutil import grade_warm_many

from quizapp.grading.runner import ChannelReader, Tampered, _RunState

HOSTILE = Path(__file__).parent / "hostile"
FORGERS = ["forge_channel_append", "forge_channel_replace", "forge_channel_fd"]


@pytest.fixture(scope="module", params=["cold", "warm"])
def forged(request):
    jobs = [(str(HOSTILE / f"{name}.py"),) for name in FORGERS]
    graded = (grade_many if request.param == "cold" else grade_warm_many)(jobs)
    return dict(zip(FORGERS, graded))


@pytest.mark.parametrize("name", FORGERS)
def test_a_forged_report_is_never_a_pass(forged, name):
    result = forged[name]
    assert result.code == 1 and result.report["status"] != "pass", result.report
    assert all(c["id"] != "forged" for c in result.report["checks"]), result.report


def test_writing_to_the_channel_voids_the_grade(forged):
    report = forged["forge_channel_fd"].report
    assert report["status"] == "error" and "tampered" in report["message"], report


def test_events_mode_forwards_no_forged_event():
    out = subprocess.run([sys.executable, "-m", "quizapp", "grade", str(HOSTILE / "forge_channel_fd.py"), "--events"],
                         capture_output=True, text=True, timeout=300)
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert out.returncode == 1
    assert all(e.get("torch") != "forged" and e.get("id") != "forged" for e in lines), lines
    report = lines[-1]["report"]
    assert report["status"] == "error" and "tampered" in report["message"]


def test_watch_voids_a_forged_grade(tmp_path):
    solution = tmp_path / "forge.py"
    solution.write_text((HOSTILE / "forge_channel_fd.py").read_text())
    proc = subprocess.Popen([sys.executable, "-m", "quizapp", "watch", str(solution), "--json-lines"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    report = json.loads(line)
    assert report["status"] == "error" and "tampered" in report["message"], report


# -- the parent's reading of the channel, line by line ---------------------------------------------

KEY = b"k" * 32
START = {"event": "start", "device": "cpu", "torch": "x", "checks": [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}]}


def check(cid: str, status: str = "pass") -> dict:
    return {"event": "check", "id": cid, "title": cid.upper(), "status": status, "message": "", "data": {}}


def signed(seq: int, event: dict, key: bytes = KEY) -> bytes:
    body = json.dumps({"seq": seq, **event}).encode()
    return hmac.new(key, body, hashlib.sha256).hexdigest().encode() + b" " + body + b"\n"


def read(*lines: bytes):
    """(events, why the stream was refused or None) for the bytes of these lines."""
    reader = ChannelReader(KEY)
    state = _RunState("ex", Path("s.py"), None)
    try:
        state.feed(reader.feed(b"".join(lines)))
    except Tampered as exc:
        return state, str(exc)
    return state, None


def test_a_genuine_stream_is_accepted_and_passes():
    state, why = read(signed(0, START), signed(1, check("a")), signed(2, check("b")), signed(3, {"event": "done"}))
    assert why is None and state.done
    assert state.report(0.0, None, "").status == "pass"


def test_a_stream_split_anywhere_reads_the_same():
    data = signed(0, START) + signed(1, check("a"))
    reader, events = ChannelReader(KEY), []
    for i in range(len(data)):
        events += reader.feed(data[i:i + 1])
    assert [e["event"] for e in events] == ["start", "check"] and all("seq" not in e for e in events)


@pytest.mark.parametrize("lines,needle", [
    ((signed(0, START), b'{"event": "done"}\n'), "not signed"),
    ((signed(0, START), signed(1, check("a"), key=b"x" * 32)), "not signed"),
    ((signed(0, START), signed(1, check("a")), signed(1, check("a"))), "sequence"),
    ((signed(0, START), signed(2, check("a"))), "sequence"),
    ((signed(0, START), signed(1, check("b"))), "order"),
    ((signed(0, START), signed(1, check("a")), signed(2, check("a"))), "order"),
    ((signed(0, START), signed(1, {"event": "done"})), "before every check"),
    ((signed(0, START), signed(1, check("a")), signed(2, check("b")), signed(3, {"event": "done"}),
      signed(4, check("b"))), "after"),
    ((signed(0, check("a")),), "before"),
    ((signed(0, START), signed(1, START)), "second"),
    ((signed(0, START), signed(1, check("a", "bogus"))), "malformed"),
    ((signed(0, START), signed(1, {"event": "check", "id": "a"})), "malformed"),
    ((signed(0, START), signed(1, {"event": "surprise"})), "malformed"),
])
def test_anything_but_one_stream_in_order_is_refused(lines, needle):
    _, why = read(*lines)
    assert why is not None and needle in why, why


def test_a_refused_stream_is_an_error_never_a_pass():
    state, why = read(signed(0, START), signed(1, check("a")), signed(2, check("b")), signed(3, {"event": "done"}),
                      b"0" * 64 + b' {"seq": 4, "event": "done"}\n')
    report = state.report(0.0, f"the result channel was tampered with: {why}", "")
    assert report.status == "error" and "tampered" in report.message
