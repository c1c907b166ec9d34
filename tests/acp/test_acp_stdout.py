"""Nothing but JSON-RPC on stdout: the guard, and a whole session read line by line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from tests.support.scripted_model import call, text, tool_calls

GUARD = 60


def test_stray_output_goes_to_the_log_and_the_protocol_keeps_stdout(tmp_path):
    log_file = tmp_path / "logs" / "hello-tui.log"
    script = textwrap.dedent(
        f"""
        import os, subprocess, sys
        from pathlib import Path
        from hello_tui.acp.stdio_guard import guard_stdout
        fd = guard_stdout(Path({str(log_file)!r}))
        print("a stray print")
        sys.stdout.write("a stray write\\n")
        os.write(1, b"a raw write to fd 1\\n")
        subprocess.run(["echo", "a child's output"], check=True)
        os.write(fd, b'{{"jsonrpc": "2.0", "method": "ping"}}\\n')
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=GUARD, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == '{"jsonrpc": "2.0", "method": "ping"}\n'
    logged = log_file.read_text()
    for stray in ("a stray print", "a stray write", "a raw write to fd 1", "a child's output"):
        assert stray in logged


def test_every_stdout_line_of_a_session_is_json_rpc(tmp_path, scripted_server):
    """An independent client: the spec's JSON written by hand, no SDK on this side."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("print('hi')\n")
    server = scripted_server(
        [
            tool_calls([call("read", {"path": "a.py"})], reasoning="Look first."),
            text("It prints hi.", reasoning="Done."),
        ]
    )
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}},
        },
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": str(repo), "mcpServers": []},
        },
    ]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hello_tui",
            "acp",
            "--repo",
            str(repo),
            "--base-url",
            server.base_url,
            "--model",
            "scripted-model",
            "--debug",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    lines: list[str] = []

    def send(message):
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    def read_until(request_id):
        while True:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            lines.append(line)
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return message

    try:
        for message in messages:
            send(message)
            reply = read_until(message["id"])
        session_id = reply["result"]["sessionId"]
        send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/prompt",
                "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "a.py?"}]},
            }
        )
        reply = read_until(3)
        proc.stdin.close()
        rest = proc.stdout.read()
        assert proc.wait(GUARD) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert reply["result"] == {"stopReason": "end_turn"}
    lines += rest.splitlines(keepends=True)
    for line in lines:
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0"
        assert "method" in message or "result" in message or "error" in message
    updates = [json.loads(line)["params"]["update"] for line in lines if "session/update" in line]
    kinds = [u["sessionUpdate"] for u in updates]
    assert "agent_thought_chunk" in kinds and "tool_call" in kinds
    said = "".join(
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert said == "It prints hi."
    # --debug logged, into the log file and not onto stdout
    assert (repo / ".helloagents" / "logs" / "hello-tui.log").read_text().strip()
