"""All MCP servers of one engine: configured, approved, started, offered, stopped.

Servers start lazily, at the first turn: the model can only call a tool it was
offered, so the tools must be listed before that turn's first model call, and
starting them when the engine opens would run (and wait for) programs in
sessions that never ask anything. Servers that fail to start are notices; the
turn goes on without their tools. A repo server (from `.mcp.json`) starts only
once the user approved it (remembered per repo and definition) or said "for
this session"; one refused is not asked about again in this session.

Starting can take seconds (a package runner fetching its server, a server
that never answers waits out the start timeout), so `start_events` reports
it as it goes: `McpStartup` events, one as the servers start and one per
server as it is ready, fails or times out, for every front end to show.

The tools of every running server go into the registry as one group, trimmed
to the schema budget; when a server crashes its tools leave the registry
before the next model call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hello_tui.core import logs
from hello_tui.core.approval import Approver, ServerStartRequest, ToolVerdict
from hello_tui.core.events import Event, McpStartup
from hello_tui.core.terminal_text import safe_text
from hello_tui.core.tools import Tool
from hello_tui.mcp.approvals import ApprovalMemory
from hello_tui.mcp.budget import DEFAULT_MAX_TOOLS, DEFAULT_TOKEN_BUDGET, Offer, trim
from hello_tui.mcp.config import McpConfigError, McpServerConfig, configured_servers, expanded
from hello_tui.mcp.connection import START_TIMEOUT, ServerConnection
from hello_tui.mcp.names import function_name
from hello_tui.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

REGISTRY_GROUP = "mcp"


@dataclass(frozen=True)
class McpToolInfo:
    name: str  # the server's name for it
    function: str  # the name the model calls
    description: str
    offered: bool  # False: left out by the schema budget


@dataclass(frozen=True)
class McpServerState:
    """One server as /mcp, `hello-tui mcp list` and doctor show it."""

    name: str
    transport: str
    source: str  # repo | user | client
    origin: str
    summary: str
    # not started | not approved | starting | running | failed | crashed | closed | invalid
    state: str
    error: str = ""
    tools: tuple[McpToolInfo, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transport": self.transport,
            "source": self.source,
            "origin": self.origin,
            "summary": self.summary,
            "state": self.state,
            "error": self.error,
            "tools": [t.__dict__ for t in self.tools],
        }


class McpManager:
    def __init__(
        self,
        repo: Path,
        registry: ToolRegistry,
        *,
        log_dir: Path,
        memory: ApprovalMemory | None = None,
        user_config: Path | None = None,
        environ: Mapping[str, str] | None = None,
        secrets: tuple[str, ...] = (),
        token_budget: int = DEFAULT_TOKEN_BUDGET,
        max_tools: int = DEFAULT_MAX_TOOLS,
        start_timeout: float = START_TIMEOUT,
        read_config: bool = True,
    ) -> None:
        self.repo = repo
        self.registry = registry
        self.log_dir = log_dir
        self.memory = memory or ApprovalMemory()
        self.environ = dict(os.environ if environ is None else environ)
        self.secrets = secrets
        self.token_budget = token_budget
        self.max_tools = max_tools
        self.start_timeout = start_timeout
        self._configs: dict[str, McpServerConfig] = {}
        self._connections: dict[str, ServerConnection] = {}
        self._refused: set[str] = set()  # not started this session: said no to, or invalid
        self._invalid: dict[str, str] = {}  # name -> why its definition cannot start
        self._session_tools: set[tuple[str, str]] = set()
        # (descriptions cut, function names left out) when the budget last trimmed
        self._trim_state: tuple[bool, set[str]] = (False, set())
        self._functions: dict[tuple[str, str], str] = {}  # (server, tool) -> function name
        self._notices: list[str] = []
        self._user_config = user_config
        self._config_read = not read_config
        self._lock = asyncio.Lock()
        self._stopping: set[asyncio.Task[None]] = set()
        self._junk_told: set[str] = set()  # servers whose stray stdout the user was told of

    # ------------------------------------------------------------------ configuration

    def _read_config(self) -> None:
        if self._config_read:
            return
        self._config_read = True
        servers, notices = configured_servers(self.repo, self._user_config)
        self._notices += notices
        for server in servers:
            self._configs.setdefault(server.name, server)

    def add_servers(self, configs: list[McpServerConfig]) -> None:
        """More servers (an editor's, over ACP); they start at the next turn. A name already
        taken is replaced, so a client can hand over its servers again."""
        self._read_config()
        for config in configs:
            old = self._connections.pop(config.name, None)
            if old is not None:
                self._notices.append(f"MCP server '{config.name}' was replaced by a new definition")
                task = asyncio.get_running_loop().create_task(old.stop())
                self._stopping.add(task)  # held until done: a bare task may be collected
                task.add_done_callback(self._stopping.discard)
            self._configs[config.name] = config
            self._refused.discard(config.name)
            self._invalid.pop(config.name, None)

    def connection(self, name: str) -> ServerConnection | None:
        return self._connections.get(name)

    def take_notices(self) -> list[str]:
        for connection in self._connections.values():
            if connection.junk_lines and connection.name not in self._junk_told:
                self._junk_told.add(connection.name)
                self._notices.append(
                    f"MCP server '{connection.name}' writes lines that are not MCP messages "
                    f"on its stdout ({connection.junk_lines} so far); they are ignored "
                    f"({logs.internal_error_hint()})."
                )
        notices, self._notices = self._notices, []
        # Names, commands and errors in them are a repo's file's or a server's words.
        return [safe_text(notice) for notice in notices]

    # ------------------------------------------------------------------ starting

    async def start_events(self, approver: Approver) -> AsyncGenerator[Event, None]:
        """`ensure_started`, yielding its `McpStartup` events as they happen. Closing the
        iterator early (the turn was cancelled) cancels the start."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()

        async def run() -> None:
            try:
                await self.ensure_started(approver, queue.put_nowait)
            finally:
                queue.put_nowait(None)

        task = asyncio.create_task(run(), name="mcp start")
        try:
            while (event := await queue.get()) is not None:
                yield event
            await task
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def ensure_started(
        self, approver: Approver, emit: Callable[[Event], None] = lambda event: None
    ) -> None:
        """Start every configured server not tried yet (asking for repo servers first), and
        drop the tools of running ones that died since the last turn."""
        async with self._lock:
            if not self._config_read:  # the files are read once, off the event loop
                await asyncio.to_thread(self._read_config)
            # A server that died since the last turn must not have its tools offered again.
            running = [c for c in self._connections.values() if c.state == "running"]
            await asyncio.gather(*(c.check_alive() for c in running))
            pending = [
                c
                for n, c in self._configs.items()
                if n not in self._refused
                and (n not in self._connections or self._connections[n].state == "stopped")
            ]
            if not pending:
                return
            to_start: list[ServerConnection] = []
            for config in pending:
                try:
                    approved = await self._approved(config, approver)
                except Exception as exc:  # an approver that cannot ask refuses; logged
                    log.exception("asking about MCP server %s failed", config.name)
                    self._refused.add(config.name)
                    self._notices.append(
                        f"MCP server '{config.name}' is not started: asking for approval "
                        f"failed ({type(exc).__name__})"
                    )
                    continue
                if not approved:
                    continue
                try:
                    expanded(config, self.environ, self.secrets)
                except McpConfigError as exc:
                    self._refused.add(config.name)
                    self._invalid[config.name] = str(exc)
                    self._notices.append(f"{exc}; it is not started")
                    continue
                connection = ServerConnection(
                    config,
                    repo=self.repo,
                    log_dir=self.log_dir,
                    environ=self.environ,
                    secrets=self.secrets,
                    on_ended=self._ended,
                )
                self._connections[config.name] = connection
                to_start.append(connection)
            await self._start_all(to_start, emit)
            for connection in to_start:
                if connection.state == "failed":
                    self._notices.append(
                        f"MCP server '{connection.name}' could not start: {connection.error}. "
                        "Its tools are not available."
                    )
            self._sync_registry()

    async def _start_all(
        self, connections: list[ServerConnection], emit: Callable[[Event], None]
    ) -> None:
        if not connections:
            return
        names = [c.name for c in connections]
        total, ended = len(names), 0
        plural = "s" if total > 1 else ""
        emit(
            McpStartup(
                phase="starting",
                servers=names,
                total=total,
                text=f"starting {total} MCP server{plural}: {', '.join(names)}",
            )
        )

        async def start(connection: ServerConnection) -> None:
            nonlocal ended
            await connection.start(self.start_timeout)
            ended += 1
            emit(_startup_event(connection, ended, total))

        await asyncio.gather(*(start(c) for c in connections))

    async def _approved(self, config: McpServerConfig, approver: Approver) -> bool:
        if not config.needs_approval:
            return True
        if await asyncio.to_thread(self.memory.server_approved, config, self.repo):
            return True
        # Shown to the user: what the repo's file says, its escape sequences as text.
        request = ServerStartRequest(
            server=safe_text(config.name),
            origin=safe_text(config.origin),
            summary=safe_text(config.summary()),
            env_names=tuple(safe_text(n) for n in sorted(config.env)),
            header_names=tuple(safe_text(n) for n in sorted(config.headers)),
        )
        verdict = await approver.approve_server(request)
        if verdict == "deny":
            self._refused.add(config.name)
            names = request.names_line()
            self._notices.append(
                f"MCP server '{config.name}' from {config.origin} was not approved; "
                "its tools are not offered (approve it in the app, or run exec with --yes). "
                f"It would run: {request.summary}." + (f" {names}" if names else "")
            )
            return False
        if verdict == "always":
            await asyncio.to_thread(self.memory.approve_server, config, self.repo)
        return True

    def _ended(self, connection: ServerConnection) -> None:
        self._notices.append(self.gone_notice(connection.name, connection.error))
        self._sync_registry()

    def gone_notice(self, server: str, reason: str) -> str:
        # Said once: the tool's result and the next turn's notices share this text.
        return f"MCP server '{server}' stopped ({reason}); its tools were removed."

    # ------------------------------------------------------------------ offering

    def set_token_budget(self, tokens: int) -> None:
        """The schemas' share of the context budget, known once the model's window is."""
        if tokens != self.token_budget:
            self.token_budget = tokens
            self._sync_registry()

    def _sync_registry(self) -> None:
        taken = {n.lower() for n in self.registry.names if not n.startswith("mcp__")}
        offers: list[Offer] = []
        for connection in self._connections.values():
            if connection.state != "running":
                continue
            for tool in connection.tools:
                function = function_name(connection.name, tool.name, taken)
                offers.append(Offer(connection.name, function, _schema(function, tool), tool.name))
        trimmed = trim(offers, self.token_budget, self.max_tools)
        trim_state = (trimmed.cut_descriptions, {n for v in trimmed.dropped.values() for n in v})
        if trim_state != self._trim_state:
            self._notices += trimmed.notices()
            self._trim_state = trim_state
        self._functions = {(o.server, o.tool): o.name for o in offers}
        self.registry.set_group(REGISTRY_GROUP, self._tools(trimmed.offers))

    def _tools(self, offers: list[Offer]) -> list[Tool]:
        if not offers:
            # The adapter imports the MCP SDK, seconds of start-up on a cold disk: a session
            # with no server running (most of them) never loads it.
            return []
        from hello_tui.mcp.tool import McpTool

        return [McpTool(self, o.server, o.tool, o.name, o.schema) for o in offers]

    # ------------------------------------------------------------------ approvals of calls

    async def tool_allowed(self, server: str, tool: str) -> bool:
        if (server, tool) in self._session_tools:
            return True
        config = self._configs.get(server)
        if config is None:
            return False
        return await asyncio.to_thread(self.memory.tool_always_allowed, config, self.repo, tool)

    async def allow_tool(self, server: str, tool: str, verdict: ToolVerdict) -> None:
        if verdict == "session":
            self._session_tools.add((server, tool))
        elif verdict == "always":
            self._session_tools.add((server, tool))
            config = self._configs.get(server)
            if config is not None:
                await asyncio.to_thread(self.memory.always_allow_tool, config, self.repo, tool)

    # ------------------------------------------------------------------ state and closing

    def states(self, approved: dict[str, bool] | None = None) -> list[McpServerState]:
        """Every configured server: its state, and its tools when it runs."""
        self._read_config()
        offered = set(self.registry.names)
        states = []
        for name, config in self._configs.items():
            connection = self._connections.get(name)
            tools: tuple[McpToolInfo, ...] = ()
            error = ""
            state: str
            if connection is not None:
                state, error = connection.state, connection.error
                if state == "stopped":  # its start was cancelled; the next turn tries again
                    state = "not started"
                tools = tuple(
                    McpToolInfo(
                        t.name,
                        fn := self._functions.get((name, t.name), ""),
                        _first_line(t.description),
                        fn in offered,
                    )
                    for t in connection.tools
                )
            elif name in self._invalid:
                state, error = "invalid", self._invalid[name]
            elif name in self._refused or not self.memory.server_approved(config, self.repo):
                state = "not approved"  # server_approved: True for servers needing none
            else:
                state = "not started"
            states.append(
                McpServerState(
                    name,
                    config.transport,
                    config.source,
                    config.origin,
                    config.summary(),
                    state,
                    error,
                    tools,
                )
            )
        return states

    async def aclose(self) -> None:
        """Stop every server (each bounded by the stop timeout)."""
        connections = list(self._connections.values())
        await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)
        await asyncio.gather(*self._stopping, return_exceptions=True)
        self.registry.set_group(REGISTRY_GROUP, [])


def _startup_event(connection: ServerConnection, ended: int, total: int) -> McpStartup:
    name, counted = connection.name, f" ({ended} of {total})" if total > 1 else ""
    if connection.state == "running":
        tools = len(connection.tools)
        detail = f"{tools} tool{'s' if tools != 1 else ''}"
        return McpStartup(
            phase="ready",
            server=name,
            detail=detail,
            ended=ended,
            total=total,
            text=f"MCP server '{name}' ready, {detail}{counted}",
        )
    verb = "timed out" if connection.timed_out else "failed"
    return McpStartup(
        phase="timed_out" if connection.timed_out else "failed",
        server=name,
        detail=connection.error,
        ended=ended,
        total=total,
        text=f"MCP server '{name}' {verb}: {connection.error}{counted}",
    )


def _schema(function: str, tool: Any) -> dict[str, Any]:
    parameters = dict(tool.input_schema or {"type": "object", "properties": {}})
    parameters.pop("title", None)
    parameters.setdefault("type", "object")
    parameters.setdefault("properties", {})
    description = (tool.description or getattr(tool, "title", None) or tool.name).strip()
    return {
        "type": "function",
        "function": {
            "name": function,
            "description": description,
            "parameters": parameters,
        },
    }


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""
