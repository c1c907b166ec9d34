"""One running MCP server: start it, list its tools, call them, stop it.

The SDK's client is an anyio context manager, which must be entered and left
in the same task; a turn's task ends long before the server should. So each
server lives in a task of its own (`_serve`) that opens the client, publishes
it, and waits for `stop()`. Tool calls are made from the turn's task on the
published session. When the server dies (its process exits, its HTTP
endpoint goes away) the call fails with the SDK's "connection closed" error
or the serving task ends; either way the connection is marked `crashed` and
`on_ended` tells the manager, which takes its tools away.

A tool call may pass a progress callback: the SDK then sends a
`progressToken` with the request, and the server's progress notifications
reach the callback while the call runs. What the SDK itself reports (a line
on stdout that is not an MCP message, a session it could not end) goes to
hello-tui's log (`mcp.sdk_log`); each connection counts the junk lines it was
sent, so the user is told once, in one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TextIO

from hello_tui.mcp.config import McpServerConfig, expanded
from hello_tui.mcp.sdk_log import route_sdk_logging
from hello_tui.tools.shell.environment import server_environment

log = logging.getLogger(__name__)

State = Literal["stopped", "starting", "running", "failed", "crashed", "closed"]
START_TIMEOUT = 30.0
STOP_TIMEOUT = 5.0
PING_TIMEOUT = 2.0


class ServerGone(Exception):
    """The server stopped answering (exited, crashed, or its endpoint went away)."""


class CallTimedOut(Exception):
    """A tool call took longer than the server's timeout."""


# (progress, total or None, message or None), as the SDK calls it
ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]


def describe(exc: BaseException) -> str:
    """One readable line for an error, looking inside the task groups anyio wraps them in."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class ServerConnection:
    def __init__(
        self,
        config: McpServerConfig,
        *,
        repo: Path,
        log_dir: Path,
        environ: Mapping[str, str] | None = None,
        secrets: tuple[str, ...] = (),
        on_ended: Callable[[ServerConnection], None] = lambda c: None,
    ) -> None:
        self.config = config
        self.repo = repo
        self.log_dir = log_dir
        self.environ = dict(os.environ if environ is None else environ)
        self.secrets = secrets
        self.on_ended = on_ended
        self.state: State = "stopped"
        self.error = ""
        self.timed_out = False  # the last start gave up waiting for the server
        self.junk_lines = 0  # transport errors: lines on stdout that are not MCP messages
        self.tools: list[Any] = []  # the SDK's Tool models, as listed
        self.server_info = ""
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    @property
    def name(self) -> str:
        return self.config.name

    # ------------------------------------------------------------------ start and stop

    async def start(self, timeout: float = START_TIMEOUT) -> None:
        """Start and list the tools; on failure `state` is "failed" and `error` says why."""
        if self.state in ("starting", "running"):
            return
        self.state, self.error, self.timed_out = "starting", "", False
        route_sdk_logging()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # A failure after the start gave up waiting is still read, so it is not logged as lost.
        ready.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._serve(ready), name=f"mcp server {self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout)
        except TimeoutError:
            self._fail(f"did not answer within {timeout:g} s")
            self.timed_out = True
            await self._end_task()
        except ServerGone as exc:
            self._fail(str(exc))
            await self._end_task()
        except asyncio.CancelledError:
            # The turn was cancelled while the server started: stop it; the next turn retries.
            self._fail("start cancelled")
            await self._end_task()
            self.state = "stopped"
            raise

    def _fail(self, reason: str) -> None:
        self.state, self.error = "failed", reason
        self.tools = []
        self._client = None

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                client = await self._open(stack)
                self.tools = await _list_all_tools(client)
                info = getattr(client, "server_info", None)
                self.server_info = f"{info.name} {info.version}".strip() if info else ""
                self._client = client
                self.state = "running"
                ready.set_result(None)
                await self._stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as exc:  # the SDK's task groups raise exception groups
            log.warning("MCP server %s ended", self.name, exc_info=True)
            if not ready.done():
                ready.set_exception(ServerGone(describe(exc)))
            elif self.state == "running":
                self._crashed(describe(exc))
        else:
            if self.state == "running":  # the client closed without being asked to
                self._crashed("the connection closed")
        finally:
            self._client = None

    async def _open(self, stack: contextlib.AsyncExitStack) -> Any:
        from mcp import Client, Implementation

        config = expanded(self.config, self.environ, self.secrets)
        info = Implementation(name="hello-tui", version=_version())
        if config.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = await stack.enter_async_context(create_mcp_http_client(headers=config.headers))
            transport = streamable_http_client(config.url, http_client=http)
        else:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            env = server_environment(self.environ, secrets=self.secrets) | config.env
            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=env,
                cwd=str(self.repo / config.cwd) if config.cwd else str(self.repo),
            )
            transport = stdio_client(params, errlog=stack.enter_context(self._stderr_log()))
        client = Client(transport, client_info=info, message_handler=self._on_message)
        return await stack.enter_async_context(client)

    async def _on_message(self, message: Any) -> None:
        # Notifications have their own callbacks; an exception here is the transport's
        # (a line that did not parse), already logged with its text by the SDK.
        if isinstance(message, Exception):
            self.junk_lines += 1

    def _stderr_log(self) -> TextIO:
        """The server's stderr goes to a log file of its own, never onto the screen."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in self.name)
        return open(self.log_dir / f"mcp-{safe}.log", "a", encoding="utf-8")

    def _crashed(self, reason: str) -> None:
        if self.state != "running":
            return
        self.state, self.error = "crashed", reason
        self.tools = []
        self._client = None
        self.on_ended(self)

    async def stop(self) -> None:
        if self.state in ("running", "starting"):
            self.state = "closed"
        self._stop.set()
        await self._end_task()

    async def _end_task(self) -> None:
        task, self._task = self._task, None
        if task is None or task.done():
            return
        self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        except BaseException:
            log.debug("MCP server %s stopped with an error", self.name, exc_info=True)

    async def check_alive(self, timeout: float = PING_TIMEOUT) -> None:
        """Ping a running server; one whose connection is gone is marked crashed. A slow
        answer is not a death: a busy server keeps its tools."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        client = self._client
        if client is None or self.state != "running":
            return
        try:
            async with asyncio.timeout(timeout):
                await client.session.send_ping()
        except TimeoutError:
            log.info("MCP server %s did not answer a ping within %.0f s", self.name, timeout)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._crashed(exc.message)
        except (OSError, EOFError, BaseExceptionGroup) as exc:
            self._crashed(describe(exc))

    # ------------------------------------------------------------------ calls

    async def call(
        self, tool: str, arguments: dict[str, Any], progress: ProgressCallback | None = None
    ) -> Any:
        """The SDK's CallToolResult. Raises ServerGone, CallTimedOut, or the SDK's MCPError
        for an error the server answered with (an unknown tool, invalid arguments).
        `progress` receives the server's progress notifications for this call."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        client = self._client
        if client is None or self.state != "running":
            raise ServerGone(self.error or f"the server is {self.state}")
        try:
            return await client.call_tool(
                tool,
                arguments,
                read_timeout_seconds=self.config.timeout,
                progress_callback=progress,
            )
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise CallTimedOut(f"no answer within {self.config.timeout:g} s") from None
            if exc.code == CONNECTION_CLOSED:
                self._crashed(exc.message)
                raise ServerGone(exc.message) from None
            raise
        except (OSError, EOFError, BaseExceptionGroup) as exc:
            self._crashed(describe(exc))
            raise ServerGone(describe(exc)) from None


async def _list_all_tools(client: Any) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(100):  # a server that pages forever still ends
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hello-tui")
    except PackageNotFoundError:
        return "0"
