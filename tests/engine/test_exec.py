"""`hello-tui exec` as a user runs it: the real CLI in a subprocess, against the scripted server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.scripted_model import call, error, slow, text, tool_calls
from tests.support.warm_python import warm_python

GUARD = 60  # seconds: only a hang (e.g. reading stdin) would reach it


def cli(tmp_path, *args, server=None, env=None, stdin=subprocess.DEVNULL):
    flags = ["--repo", str(tmp_path)]
    if server is not None:
        flags += ["--base-url", server.base_url, "--model", "scripted-model"]
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [*warm_python(), "-m", "hello_tui", "exec", *flags, *args],
        capture_output=True,
        text=True,
        timeout=GUARD,
        env=full_env,
        stdin=stdin,
        check=False,
    )


def test_exit_0_prints_the_answer(tmp_path, scripted_server):
    server = scripted_server(
        [tool_calls([call("ls", {"path": "."})]), text("The repo holds a.py.")]
    )
    (tmp_path / "a.py").write_text("x = 1\n")
    proc = cli(tmp_path, "what is here?", server=server)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "The repo holds a.py.\n"
    assert "· ls" in proc.stderr
    sessions = list((tmp_path / ".helloagents" / "sessions").glob("*.json"))
    assert len(sessions) == 1
    logs = list((tmp_path / ".helloagents" / "logs").glob("*.jsonl"))
    assert logs and logs[0].stem == sessions[0].stem


def test_json_prints_one_object_per_event(tmp_path, scripted_server):
    server = scripted_server([tool_calls([call("ls", {"path": "."})]), text("done")])
    proc = cli(tmp_path, "--json", "list files", server=server)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "TurnStarted" and types[-1] == "TurnFinished"
    assert "ToolCallStarted" in types and "ToolCallFinished" in types and "Usage" in types
    assert events[-1]["answer"] == "done"


def test_exit_1_when_the_model_fails_mid_turn(tmp_path, scripted_server):
    server = scripted_server([error(503), error(503), error(503)])
    proc = cli(tmp_path, "do something", server=server)
    assert proc.returncode == 1
    assert "gave up after 3 attempts" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_exit_2_without_a_key(tmp_path):
    proc = cli(tmp_path, "anything")  # the default provider needs a key; none is set
    assert proc.returncode == 2
    assert "LLM_API_KEY" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_exit_2_when_the_url_is_unreachable(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = cli(tmp_path, "--base-url", f"http://127.0.0.1:{port}/v1", "anything")
    assert proc.returncode == 2
    assert "LLM_BASE_URL" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_exit_2_for_an_unknown_model(tmp_path, scripted_server):
    server = scripted_server([], models=["scripted-model"])
    proc = subprocess.run(
        [
            *warm_python(),
            "-m",
            "hello_tui",
            "exec",
            "--repo",
            str(tmp_path),
            "--base-url",
            server.base_url,
            "--model",
            "no-such-model",
            "hi",
        ],
        capture_output=True,
        text=True,
        timeout=GUARD,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 2
    assert "LLM_MODEL_ID" in proc.stderr


def test_exit_2_for_usage_errors(tmp_path, scripted_server):
    server = scripted_server([])
    assert cli(tmp_path, "  ", server=server).returncode == 2
    assert cli(tmp_path, "--protocol", "smoke", "task", server=server).returncode == 2
    assert cli(tmp_path, "--resume", "nope", "task", server=server).returncode == 2


PATCH = "*** Begin Patch\n*** Add File: new.txt\n+created\n*** End Patch\n"


def test_approvals_are_declined_without_yes(tmp_path, scripted_server):
    server = scripted_server([tool_calls([call("apply_patch", {"patch": PATCH})]), text("tried")])
    proc = cli(tmp_path, "create new.txt", server=server, stdin=subprocess.PIPE)
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "new.txt").exists()
    told = server.chat_requests[-1]["messages"][-1]["content"]
    assert "declined" in told


def test_yes_approves(tmp_path, scripted_server):
    server = scripted_server([tool_calls([call("apply_patch", {"patch": PATCH})]), text("made it")])
    proc = cli(tmp_path, "--yes", "create new.txt", server=server)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "new.txt").read_text() == "created\n"


def test_continue_resumes_the_latest_session(tmp_path, scripted_server):
    server = scripted_server([text("first"), text("second")])
    assert cli(tmp_path, "remember the word kiwi", server=server).returncode == 0
    proc = cli(tmp_path, "--continue", "which word?", server=server)
    assert proc.returncode == 0, proc.stderr
    users = [m["content"] for m in server.chat_requests[-1]["messages"] if m["role"] == "user"]
    assert users == ["remember the word kiwi", "which word?"]


SIGNAL_MASKS = ("SigBlk", "SigIgn", "SigCgt")


def signal_state(pid: int) -> dict[str, str]:
    """How each thread of `pid` treats signals (ignored, blocked, caught masks), for a
    failure's message: a SIGINT that did nothing was ignored, blocked or swallowed."""
    state = {}
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        try:
            lines = status.read_text().splitlines()
        except OSError:
            continue  # the thread ended meanwhile
        masks = [line.replace(":\t", "=") for line in lines if line.startswith(SIGNAL_MASKS)]
        state[status.parent.name] = " ".join(masks)
    return state


# The child starts with Ctrl-C live whatever the worker's state when it forks: a SIGINT
# ignored by the parent stays ignored across exec (as a shell's background jobs have it),
# and hello-tui keeps it so, as every program does.
LIVE_CTRL_C = (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'hello-tui'; runpy.run_module('hello_tui', run_name='__main__')"
)


def test_ctrl_c_saves_the_session_and_exits_130(tmp_path, scripted_server):
    server = scripted_server([slow("word " * 400, delay=0.02), text("after")])
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            LIVE_CTRL_C,
            "exec",
            "--repo",
            str(tmp_path),
            "--base-url",
            server.base_url,
            "--model",
            "scripted-model",
            "write a lot",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline = time.monotonic() + GUARD
        while not server.chat_requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.stdout is not None
        first = proc.stdout.read(10)  # the answer is streaming
        state = signal_state(proc.pid)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (err, first + out[:200], state)
    assert "Traceback" not in err
    (session,) = (tmp_path / ".helloagents" / "sessions").glob("*.json")
    data = json.loads(session.read_text())
    assert data["history"] == [{"role": "user", "content": "write a lot"}]
    proc2 = cli(tmp_path, "--continue", "go on", server=server)
    assert proc2.returncode == 0, proc2.stderr
    assert proc2.stdout == "after\n"


def test_exec_react_protocol(tmp_path, scripted_server):
    server = scripted_server(
        [text('Thought: look\nAction: ls[{"path": "."}]'), text("Action: Finish[Listed it.]")]
    )
    proc = cli(tmp_path, "--protocol", "react", "list", server=server)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Listed it.\n"
    assert all("tools" not in r for r in server.chat_requests)


def test_exec_auto_falls_back_to_react(tmp_path, scripted_server):
    server = scripted_server([text("Final Answer: fell back")], reject_tools=True)
    proc = cli(tmp_path, "list the files", server=server)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "fell back\n"
    assert "ReAct" in proc.stderr


def test_mode_auto_edit_applies_a_patch_without_yes(tmp_path, scripted_server):
    server = scripted_server([tool_calls([call("apply_patch", {"patch": PATCH})]), text("made it")])
    proc = cli(tmp_path, "--mode", "auto-edit", "create new.txt", server=server)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "new.txt").read_text() == "created\n"


def test_mode_read_only_declines_even_with_yes(tmp_path, scripted_server):
    server = scripted_server([tool_calls([call("apply_patch", {"patch": PATCH})]), text("planned")])
    proc = cli(
        tmp_path, "--yes", "create new.txt", server=server, env={"CODE_AGENT_MODE": "read-only"}
    )
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "new.txt").exists()
    assert "read-only" in server.chat_requests[-1]["messages"][-1]["content"]
