"""`hello-tui acp` survives any input: every line that is not a JSON-RPC message gets the error
JSON-RPC 2.0 prescribes and the agent goes on; the version spoken is the one answered; a prompt
past the budget is cut with a notice; closing stdin mid-turn ends the process, session saved.

A raw client over real stdio (the JSON written by hand, as a misbehaving client would)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

from hello_tui.acp.stdio_guard import GuardedTransport
from tests.mcp.conftest import stdio_definition
from tests.support.scripted_model import hang, text
from tests.support.warm_python import warm_python

GUARD = 60.0  # seconds: only a hang would reach it
# The promise: the process is gone within 2 s of its stdin closing, whatever the turn is
# doing. What it waits for then is bounded by timers (`acp.command.CLOSE_WITHIN`), not by
# work, so a loaded machine adds little; GUARD alone catches a hang.
GONE_WITHIN = 2.0


class RawClient:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.received: list[Any] = []

    async def send_line(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        await self.proc.stdin.drain()

    async def send(self, message: Any) -> None:
        await self.send_line(json.dumps(message).encode())

    async def next(self) -> Any:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), GUARD)
        assert line, "the agent closed stdout"
        message = json.loads(line)
        self.received.append(message)
        return message

    async def reply_to(self, request_id: Any) -> Any:
        while True:
            message = await self.next()
            if (
                isinstance(message, dict)
                and "method" not in message
                and message.get("id") == request_id
            ):
                return message


async def start(repo: Path, server: Any) -> RawClient:
    stderr = os.open(repo.parent / "acp-stderr.txt", os.O_WRONLY | os.O_CREAT, 0o644)
    proc = await asyncio.create_subprocess_exec(
        *warm_python(),
        "-m",
        "hello_tui",
        "acp",
        "--repo",
        str(repo),
        "--base-url",
        server.base_url,
        "--model",
        "scripted-model",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env=dict(os.environ),
        limit=16 << 20,
    )
    os.close(stderr)
    return RawClient(proc)


def initialize(request_id: Any, version: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": version, "clientCapabilities": {}},
    }


def error_of(message: dict[str, Any]) -> tuple[Any, int]:
    return message["id"], message["error"]["code"]


async def test_every_kind_of_bad_line_is_answered_and_the_agent_lives(tmp_path, scripted_server):
    repo = tmp_path / "repo"
    repo.mkdir()
    server = scripted_server([text("still here")])
    client = await start(repo, server)
    try:
        await client.send(initialize(1, 0))
        assert (await client.reply_to(1))["result"]["protocolVersion"] == 1
        for line in (b"[]", b"42", b'"hello"', b"null", b"true", b"{}"):
            await client.send_line(line)
            reply = await client.next()
            assert error_of(reply) == (None, -32600), (line, reply)
            assert reply["jsonrpc"] == "2.0"
        await client.send_line(b'{"jsonrpc": "2.0", "id": 3, "method": ')
        assert error_of(await client.next()) == (None, -32700)
        await client.send_line(b"\xff\xfe not even text")
        assert error_of(await client.next()) == (None, -32700)
        # The id is known, the message is not JSON-RPC 2.0: the error names that id.
        await client.send({"id": 4, "method": "initialize", "params": {}})
        assert error_of(await client.next()) == (4, -32600)
        await client.send({"jsonrpc": "2.0", "id": 5, "method": 7})
        assert error_of(await client.next()) == (5, -32600)
        await client.send({"jsonrpc": "2.0", "id": {"no": 1}, "result": {}})
        assert error_of(await client.next()) == (None, -32600)
        # A batch: one array back, an error for each request in it (none for a notification).
        await client.send(
            [
                initialize(6, 1),
                {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x"}},
                initialize(7, 1),
            ]
        )
        batch = await client.next()
        assert isinstance(batch, list) and [error_of(m) for m in batch] == [
            (6, -32600),
            (7, -32600),
        ]
        assert "batches" in batch[0]["error"]["data"]["details"]
        # Still alive, and it speaks version 1 whatever is asked.
        await client.send(initialize(8, 99))
        assert (await client.reply_to(8))["result"]["protocolVersion"] == 1
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "session/new",
                "params": {"cwd": str(repo), "mcpServers": []},
            }
        )
        session_id = (await client.reply_to(9))["result"]["sessionId"]
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 10,
                "method": "session/prompt",
                "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi?"}]},
            }
        )
        assert (await client.reply_to(10))["result"] == {"stopReason": "end_turn"}
    finally:
        if client.proc.stdin is not None:
            client.proc.stdin.close()
        assert await asyncio.wait_for(client.proc.wait(), GUARD) == 0


async def test_a_prompt_past_the_budget_is_cut_and_stdin_closed_mid_turn_ends_the_agent(
    tmp_path, scripted_server
):
    repo = tmp_path / "repo"
    repo.mkdir()
    # The model's window (4,096 tokens, from the endpoint) makes 2,048 the most a message gets.
    server = scripted_server([text("read it"), hang(GUARD)], model_fields={"max_model_len": 4096})
    big = "".join(f"line {i}: {'x' * 90}\n" for i in range(20_000))  # about 2 MB
    client = await start(repo, server)
    try:
        await client.send(initialize(1, 1))
        await client.reply_to(1)
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                "params": {"cwd": str(repo), "mcpServers": []},
            }
        )
        session_id = (await client.reply_to(2))["result"]["sessionId"]

        def prompt(request_id: int, said: str) -> dict[str, Any]:
            return {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "session/prompt",
                "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": said}]},
            }

        await client.send(prompt(3, "Summarise this log:\n" + big))
        assert (await client.reply_to(3))["result"] == {"stopReason": "end_turn"}
        notices = [
            m["params"]["update"]["content"]["text"]
            for m in client.received
            if isinstance(m, dict)
            and m.get("method") == "session/update"
            and m["params"]["update"].get("sessionUpdate") == "agent_message_chunk"
            and "left out" in m["params"]["update"]["content"]["text"]
        ]
        assert notices and "characters" in notices[0], client.received[-5:]
        sent = server.chat_requests[0]["messages"][-1]["content"]
        assert sent.startswith("Summarise this log:\nline 0: ")
        assert sent.rstrip().endswith("line 19999: " + "x" * 90)
        assert "characters omitted" in sent and len(sent) < 20_000

        # A second big prompt; the model never answers; the client hangs up mid-turn.
        await client.send(prompt(4, "And this one:\n" + big))
        while not server.chat_requests[1:]:
            await asyncio.sleep(0.05)
        assert client.proc.stdin is not None
        client.proc.stdin.close()
        closed_at = time.monotonic()
        assert await asyncio.wait_for(client.proc.wait(), GUARD) == 0
        took = time.monotonic() - closed_at
        assert took < GONE_WITHIN, f"took {took:.1f}s to go after stdin closed"
    finally:
        if client.proc.returncode is None:
            client.proc.kill()
            await client.proc.wait()
    sessions = list((repo / ".helloagents" / "sessions").glob("*.json"))
    saved = json.loads(next(p for p in sessions if session_id in p.name).read_text())
    tasks = [m["content"] for m in saved["history"] if m["role"] == "user"]
    assert len(tasks) == 2 and tasks[1].startswith("And this one:") and len(tasks[1]) < 20_000
    assert saved["turns"] == 2


async def test_stdin_closed_mid_turn_ends_the_agent_within_2_s_while_a_server_is_slow_to_stop(
    tmp_path, scripted_server
):
    """The turn waits on the model; the client's MCP server takes its time to stop."""
    repo = tmp_path / "repo"
    repo.mkdir()
    server = scripted_server([hang(GUARD)])
    demo = stdio_definition("--linger", "3")
    client = await start(repo, server)
    try:
        await client.send(initialize(1, 1))
        await client.reply_to(1)
        mcp = [{"name": "demo", "command": demo["command"], "args": demo["args"], "env": []}]
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/new",
                "params": {"cwd": str(repo), "mcpServers": mcp},
            }
        )
        session_id = (await client.reply_to(2))["result"]["sessionId"]
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/prompt",
                "params": {
                    "sessionId": session_id,
                    "prompt": [{"type": "text", "text": "add 2 and 3"}],
                },
            }
        )
        while not server.chat_requests:
            await asyncio.sleep(0.05)
        tools = [t["function"]["name"] for t in server.chat_requests[0]["tools"]]
        assert "mcp__demo__add" in tools  # the server is up
        assert client.proc.stdin is not None
        client.proc.stdin.close()
        closed_at = time.monotonic()
        assert await asyncio.wait_for(client.proc.wait(), GUARD) == 0
        took = time.monotonic() - closed_at
        assert took < GONE_WITHIN, f"took {took:.1f}s to go after stdin closed"
    finally:
        if client.proc.returncode is None:
            client.proc.kill()
            await client.proc.wait()
    sessions = list((repo / ".helloagents" / "sessions").glob("*.json"))
    saved = json.loads(next(p for p in sessions if session_id in p.name).read_text())
    assert [m["content"] for m in saved["history"] if m["role"] == "user"] == ["add 2 and 3"]


async def test_a_line_past_the_limit_is_refused_without_being_kept(tmp_path):
    """The guard on its own, over a real pipe: an over-long line is skipped, its id kept."""
    read_fd, write_fd = os.pipe()
    out_read, out_write = os.pipe()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1024)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb")
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(out_write, "wb")
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    guard = GuardedTransport(reader, writer, line_limit=10_000)
    long_prompt = json.dumps(
        {"jsonrpc": "2.0", "id": 12, "method": "session/prompt", "params": {"t": "y" * 50_000}}
    )
    fine = json.dumps({"jsonrpc": "2.0", "id": 13, "method": "session/cancel", "params": {}})
    with os.fdopen(write_fd, "wb") as feed:
        feed.write(long_prompt.encode() + b"\n" + fine.encode() + b"\n")
    assert (await guard.receive())["id"] == 13
    assert await guard.receive() is None
    # The refusal was drained into the pipe before the next message came back: read it
    # without blocking the loop (the writer's end closes on a later loop turn).
    os.set_blocking(out_read, False)
    written = os.read(out_read, 1 << 20)
    await guard.close()
    os.close(out_read)
    (refusal,) = [json.loads(line) for line in written.splitlines()]
    assert error_of(refusal) == (12, -32600)
    assert "longer than the 10,000 allowed" in refusal["error"]["data"]["details"]
