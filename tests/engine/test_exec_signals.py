"""SIGTERM and SIGHUP during a stalled request: `hello-tui exec` saves, says so, exits 128+N.

A real subprocess, a real signal, the scripted server stalling mid-stream;
then `--continue` must find a valid session with the task and the finished
tool step in it, and every tool call answered.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.support.scripted_model import call, stall, text, tool_calls

TASK = "summarise the repository"
GUARD = 60


def exec_cmd(repo, server, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "hello_tui",
        "exec",
        "--repo",
        str(repo),
        "--base-url",
        server.base_url,
        "--model",
        "scripted-model",
        *args,
    ]


def wait_for(predicate, what: str) -> None:
    end = time.monotonic() + GUARD
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_during_a_stalled_request_saves_a_resumable_session(
    tmp_path, scripted_server, sig, code
):
    (tmp_path / "README.md").write_text("# demo\n")
    server = scripted_server(
        [
            tool_calls([call("ls", {"path": "."}, id="call_ls")]),
            stall(3, 120, text("The repository holds a small demo and more words follow")),
        ]
    )
    proc = subprocess.Popen(
        exec_cmd(tmp_path, server, TASK),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=dict(os.environ),
    )
    try:
        wait_for(lambda: len(server.chat_requests) == 2, "the second (stalling) request")
        time.sleep(0.3)  # let the first chunks arrive
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert "Traceback" not in out + err
    lines = [line for line in err.splitlines() if "interrupted" in line]
    assert lines == [
        f"interrupted by {sig.name}: the session was saved; continue it with --continue"
    ]

    (session,) = (tmp_path / ".helloagents" / "sessions").glob("*.json")
    history = json.loads(session.read_text())["history"]
    assert history[0] == {"role": "user", "content": TASK}
    called = [c["id"] for m in history for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in history if m["role"] == "tool"]
    assert called == answered == ["call_ls"]

    server.add(text("resumed fine"))
    again = subprocess.run(
        exec_cmd(tmp_path, server, "--continue", "go on"),
        capture_output=True,
        text=True,
        timeout=GUARD,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout == "resumed fine\n"
    sent = server.chat_requests[-1]["messages"]
    users = [m["content"] for m in sent if m["role"] == "user"]
    assert users[0] == TASK and users[-1] == "go on"
    assert any(m["role"] == "tool" and m["tool_call_id"] == "call_ls" for m in sent)
