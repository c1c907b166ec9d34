"""Drive `hello-tui acp` as an editor does: a subprocess, the ACP SDK's client side, real stdio."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import RequestError, spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

from tests.support.warm_python import warm_python

GUARD = 60  # seconds: only a hang would reach it

Answer = Callable[[Any, list[Any]], Awaitable[RequestPermissionResponse]]


def chose(option_id: str, meta: dict[str, Any] | None = None) -> RequestPermissionResponse:
    return RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id=option_id, field_meta=meta)
    )


def cancelled() -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


def always(option_id: str) -> Answer:
    async def answer(tool_call: Any, options: list[Any]) -> RequestPermissionResponse:
        return chose(option_id)

    return answer


@dataclass
class RecordingClient:
    """The client side: records every update and permission request, answers with `answer`."""

    answer: Answer = field(default_factory=lambda: always("reject"))
    updates: list[Any] = field(default_factory=list)
    asked: list[tuple[Any, list[Any]]] = field(default_factory=list)
    update_arrived: asyncio.Event = field(default_factory=asyncio.Event)
    permission_asked: asyncio.Event = field(default_factory=asyncio.Event)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self.update_arrived.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call, options))
        self.permission_asked.set()
        return await self.answer(tool_call, options)

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def message(self) -> str:
        return "".join(u.content.text for u in self.of("agent_message_chunk"))


@dataclass
class EditorClient(RecordingClient):
    """A client with open buffers (absolute path -> text), answering `fs/*` from them.

    A file with no buffer is refused, as a client that cannot give it would; so is
    writing a path in `refuse_writes`.
    """

    buffers: dict[str, str] = field(default_factory=dict)
    reads: list[str] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    refuse_writes: set[str] = field(default_factory=set)

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        if path not in self.buffers:
            raise RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        if path in self.refuse_writes:
            raise RequestError(-32603, f"{path} is read-only in this editor")
        self.buffers[path] = content
        return WriteTextFileResponse()


def agent_command(repo: Path, server: Any) -> list[str]:
    return [
        "-m",
        "hello_tui",
        "acp",
        "--repo",
        str(repo),
        "--base-url",
        server.base_url,
        "--model",
        "scripted-model",
    ]


@asynccontextmanager
async def acp_agent(
    repo: Path,
    server: Any,
    client: RecordingClient,
    *,
    meta: dict[str, Any] | None = None,
    fs: FileSystemCapabilities | None = None,
) -> AsyncIterator[Any]:
    """An initialized connection to a `hello-tui acp` process working in `repo`."""
    # The agent's stderr is kept beside the repository, for reading when a test fails.
    stderr = os.open(repo.parent / f"{repo.name}-acp-stderr.txt", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        async with spawn_agent_process(
            client,
            *warm_python(),
            *agent_command(repo, server),
            env=dict(os.environ),
            transport_kwargs={"stderr": stderr},
        ) as (conn, _process):
            init = await within(
                conn.initialize(
                    protocol_version=1,
                    client_capabilities=ClientCapabilities(
                        field_meta=meta, fs=fs or FileSystemCapabilities()
                    ),
                )
            )
            assert init.protocol_version == 1
            yield conn
    finally:
        os.close(stderr)


async def within(awaitable: Awaitable[Any]) -> Any:
    return await asyncio.wait_for(awaitable, GUARD)


async def new_session(conn: Any, repo: Path) -> str:
    response = await within(conn.new_session(cwd=str(repo), mcp_servers=[]))
    return response.session_id


async def prompt(conn: Any, session_id: str, text: str) -> Any:
    return await within(conn.prompt(session_id=session_id, prompt=[text_block(text)]))
