"""Model faults as a user meets them: `hello-tui exec` in a subprocess against a misbehaving server.

Each fault must end the turn with exit 1 (2 when the preflight already
fails), one readable error line and no traceback, and leave a session that
`--continue` picks up with the task still in it.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.support.scripted_model import (
    call,
    drop,
    endless,
    html_page,
    page,
    text,
    tool_calls,
)
from tests.support.warm_python import warm_python

GUARD = 60  # seconds: only a runaway stream that was not stopped would reach it
TASK = "summarise the repository"


def exec_cli(repo, server, *args: str, env: dict[str, str] | None = None, base_url=None):
    return subprocess.run(
        [
            *warm_python(),
            "-m",
            "hello_tui",
            "exec",
            "--repo",
            str(repo),
            "--base-url",
            base_url or server.base_url,
            "--model",
            "scripted-model",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=GUARD,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        check=False,
    )


def error_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("error:")]


def assert_one_clear_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    (line,) = error_lines(proc)
    for needle in needles:
        assert needle in line, line
    return line


def assert_resumable(repo, server) -> None:
    (session,) = (repo / ".helloagents" / "sessions").glob("*.json")
    data = json.loads(session.read_text())
    assert data["history"][0] == {"role": "user", "content": TASK}
    server.add(text("resumed fine"))
    again = exec_cli(repo, server, "--continue", "go on")
    assert again.returncode == 0, again.stderr
    assert again.stdout == "resumed fine\n"
    users = [m["content"] for m in server.chat_requests[-1]["messages"] if m["role"] == "user"]
    assert users[0] == TASK and users[-1] == "go on"


@pytest.mark.parametrize("framing", ["close", "chunked"])
def test_a_truncated_stream_fails_the_turn_after_one_retry(tmp_path, scripted_server, framing):
    cut = text("The repository holds a small web app and", chunk_size=4)
    server = scripted_server([drop(6, cut, framing=framing), drop(6, cut, framing=framing)])
    proc = exec_cli(tmp_path, server, TASK)
    assert_one_clear_error(proc, "cut off", "gave up after 2 attempts", "LLM_BASE_URL")
    assert len(server.chat_requests) == 2
    assert_resumable(tmp_path, server)


def test_a_truncated_stream_retried_whole_finishes(tmp_path, scripted_server):
    server = scripted_server([drop(4, framing="close"), text("It is a small web app.")])
    proc = exec_cli(tmp_path, server, TASK)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("It is a small web app.\n")
    assert "retrying" in proc.stderr.lower()


def test_a_half_sent_tool_call_is_never_run(tmp_path, scripted_server):
    marker = tmp_path / "ran.txt"
    command = {"command": f"touch {marker}"}
    cut = tool_calls([call("terminal", command)], chunk_size=3)
    server = scripted_server([drop(8, cut, framing="close"), drop(8, cut)])
    proc = exec_cli(tmp_path, server, "--yes", TASK)
    assert_one_clear_error(proc, "cut off")
    assert not marker.exists()
    assert "· terminal" not in proc.stderr
    assert_resumable(tmp_path, server)


def test_a_fast_endless_stream_ends_at_the_answer_cap(tmp_path, scripted_server):
    server = scripted_server([endless("spam " * 200)])
    proc = exec_cli(tmp_path, server, TASK)  # the default cap: 1 MiB
    assert_one_clear_error(proc, "LLM_MAX_ANSWER_BYTES", "1048576 bytes")
    assert len(proc.stdout.encode()) <= (1 << 20) + 2
    assert_resumable(tmp_path, server)


def test_a_slow_endless_stream_ends_at_the_deadline(tmp_path, scripted_server):
    server = scripted_server([endless("tick ", delay=0.05)])
    proc = exec_cli(tmp_path, server, TASK, env={"LLM_REQUEST_DEADLINE": "2"})
    assert_one_clear_error(proc, "LLM_REQUEST_DEADLINE", "2s")
    assert "tick" in proc.stdout
    assert_resumable(tmp_path, server)


def test_an_html_page_mid_turn_is_one_error_not_twenty_empty_answers(tmp_path, scripted_server):
    server = scripted_server([html_page("Session expired – sign in")])
    proc = exec_cli(tmp_path, server, TASK)
    assert_one_clear_error(proc, "HTML page", "Session expired", f"{server.base_url}/chat")
    assert "empty message" not in proc.stderr
    assert len(server.chat_requests) == 1
    assert_resumable(tmp_path, server)


def test_plain_text_mid_turn_is_one_error(tmp_path, scripted_server):
    server = scripted_server([page("upstream connect error", "text/plain", framing="close")])
    proc = exec_cli(tmp_path, server, TASK)
    assert_one_clear_error(proc, "plain text", "upstream connect error")
    assert len(server.chat_requests) == 1


def test_an_html_preflight_exits_2_naming_the_url_and_the_fix(tmp_path, scripted_server):
    server = scripted_server([], site_page=html_page("Grafana", "Welcome"))
    root = f"http://127.0.0.1:{server.port}"
    proc = exec_cli(tmp_path, server, TASK, base_url=root)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "AttributeError" not in proc.stderr
    assert f"{root}/chat/completions answered 200 with an HTML page" in proc.stderr
    assert f"--base-url {root}/v1" in proc.stderr
