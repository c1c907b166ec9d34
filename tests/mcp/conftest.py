"""MCP fixtures: the demo server over stdio and over streamable HTTP on 127.0.0.1, an approver
that answers as told and records what it was asked, and engines with MCP servers configured."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hello_tui.core.approval import PatchDecision, ServerStartRequest, ToolCallRequest
from hello_tui.mcp import McpServerConfig
from tests.support.warm_python import warm_python

DEMO = Path(__file__).with_name("demo_server.py")
TOKEN = "Bearer demo-token"


def stdio_definition(*extra_args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """A `.mcp.json` / config entry that starts the demo server over stdio."""
    definition: dict[str, Any] = {
        "command": sys.executable,
        "args": [*warm_python()[1:], str(DEMO), *extra_args],
    }
    if env:
        definition["env"] = env
    return definition


def stdio_config(
    name: str = "demo", extra_args: tuple[str, ...] = (), **fields: Any
) -> McpServerConfig:
    """The demo server as an editor would hand it over (no approval to start)."""
    return McpServerConfig(
        name=name,
        command=sys.executable,
        args=(*warm_python()[1:], str(DEMO), *extra_args),
        source="client",
        **fields,
    )


def write_mcp_json(repo: Path, servers: dict[str, Any]) -> None:
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))


def write_user_config(text: str) -> Path:
    import os

    path = Path(os.environ["XDG_CONFIG_HOME"]) / "hello-tui" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


class AskedApprover:
    """Answers tool calls and server starts as told; patches and commands are declined."""

    def __init__(self, tool: str = "once", server: str = "once") -> None:
        self.tool_verdict = tool
        self.server_verdict = server
        self.tool_requests: list[ToolCallRequest] = []
        self.server_requests: list[ServerStartRequest] = []

    async def review_patch(self, plan: Any) -> PatchDecision:
        return PatchDecision(accepted=False, reason="not in this test")

    async def approve_command(self, command: str, reason: str) -> str:
        return "deny"

    async def approve_tool_call(self, request: ToolCallRequest) -> str:
        self.tool_requests.append(request)
        return self.tool_verdict

    async def approve_server(self, request: ServerStartRequest) -> str:
        self.server_requests.append(request)
        return self.server_verdict


class NeverAsked(AskedApprover):
    async def approve_tool_call(self, request: ToolCallRequest) -> str:
        raise AssertionError(f"asked about {request}")

    async def approve_server(self, request: ServerStartRequest) -> str:
        raise AssertionError(f"asked about {request}")


def _guarded(app: Any) -> Any:
    """The demo's HTTP app, answering only requests that carry the configured header."""

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != (
            TOKEN.encode()
        ):
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorised"})
            return
        await app(scope, receive, send)

    return asgi


class HttpDemo:
    """The demo server's streamable HTTP app under uvicorn, on 127.0.0.1 and a free port."""

    def __init__(self) -> None:
        import uvicorn

        from tests.mcp.demo_server import build

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(
            _guarded(build().streamable_http_app()), log_level="warning", lifespan="on"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> HttpDemo:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the demo HTTP server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@pytest.fixture
def http_demo() -> Any:
    demo = HttpDemo().start()
    yield demo
    demo.stop()


EXEC_GUARD = 120  # seconds: only a hang would reach it


def run_exec(repo, server, *args, launcher=("-m", "hello_tui")):
    """`hello-tui exec` on `repo` against the scripted model, as a real process."""
    return subprocess.run(
        [*warm_python(), *launcher, "exec", "--repo", str(repo)]
        + ["--base-url", server.base_url, "--model", "scripted-model", *args],
        capture_output=True,
        text=True,
        timeout=EXEC_GUARD,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        check=False,
    )
