"""The ACP agent: protocol methods answered with the engine facade, one engine per session.

`initialize` answers with protocol version 1 (the one spoken here, whatever the
client asked) and announces `loadSession`, text and embedded
context in prompts, and MCP over stdio and HTTP. `session/new` opens an
engine on the client's `cwd` (the repository); `session/load` opens a saved
session and replays its record as updates before answering; `session/prompt`
runs one turn and streams its events; `session/cancel` ends the running turn
(its pending permission request is cancelled and the prompt answers
`cancelled`); `session/set_mode` switches ask / auto-edit / read-only.
A prompt that is only `/undo` or `/redo` steps the patch history instead of
starting a turn. When the client offers `fs/read_text_file` and
`fs/write_text_file` in `initialize`, each session's engine reads and writes
files through its buffers (`editor_files`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
)

from hello_tui import __version__
from hello_tui.acp.editor_files import ClientFiles
from hello_tui.acp.mcp_servers import mcp_configs
from hello_tui.acp.permissions import AcpApprover, client_offers_hunks
from hello_tui.acp.prompt_text import prompt_text
from hello_tui.acp.updates import EventUpdates, replay
from hello_tui.config import ConfigError, Settings, settings_from_args
from hello_tui.core import events as ev
from hello_tui.core.terminal_text import safe_text
from hello_tui.engine.facade import Engine
from hello_tui.engine.types import MODES, PatchError, SessionError

log = logging.getLogger(__name__)

# Prompts that are commands of their own rather than a turn for the model.
STEPS = ("/undo", "/redo")
MODE_TEXT = {
    "ask": ("Ask", "every patch and command is asked first"),
    "auto-edit": ("Auto-edit", "patches are written without asking; commands still ask"),
    "read-only": ("Read-only", "nothing may be written"),
}
INTERNAL_ERROR = -32603


@dataclass
class AcpSession:
    engine: Engine
    approver: AcpApprover
    updates: EventUpdates
    pending: list[str]  # notices said at the start of the next prompt
    cancelled: bool = False


class HelloTuiAgent:
    """The `acp.Agent` the SDK's connection dispatches to."""

    def __init__(self, args: argparse.Namespace) -> None:
        self._args = args
        self._conn: Any = None
        self._sessions: dict[str, AcpSession] = {}
        self._hunk_choices = False
        self._client_capabilities: Any = None

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def close(self, within: float | None = None) -> None:
        """Close every session's engine, together; those still closing after `within`
        seconds are left (logged) to the process's exit."""
        sessions = list(self._sessions.values())
        self._sessions.clear()
        closing = [asyncio.ensure_future(s.engine.aclose()) for s in sessions]
        if not closing:
            return
        done, pending = await asyncio.wait(closing, timeout=within)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                log.warning("an engine did not close cleanly: %s", task.exception())
        if pending:
            log.warning(
                "%d session(s) still closing after %s s: left to the exit", len(pending), within
            )

    # ------------------------------------------------------------------ setup

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        meta = getattr(client_capabilities, "field_meta", None)
        self._hunk_choices = client_offers_hunks(meta)
        self._client_capabilities = client_capabilities
        log.info("ACP client %s, protocol %s", client_info, protocol_version)
        return InitializeResponse(
            # ACP: the same version when supported, else the latest the agent speaks;
            # this agent speaks one.
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            agent_info=Implementation(name="hello-tui", title="hello-tui", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # no methods are offered: the model's key comes from the configuration

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        session = await self._open(cwd, mcp_servers or [], resume=None)
        return NewSessionResponse(session_id=session.engine.session_id, modes=_modes(session))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        session = self._sessions.get(session_id)
        if session is None:
            session = await self._open(cwd, mcp_servers or [], resume=session_id)
        engine = session.engine
        for update in replay(engine.settings.repo, engine.display(), await engine.todos()):
            await self._conn.session_update(session_id=session_id, update=update)
        return LoadSessionResponse(modes=_modes(session))

    async def _open(self, cwd: str, mcp_servers: list[Any], resume: str | None) -> AcpSession:
        settings = self._settings(cwd)
        engine: Engine | None = None
        approver = AcpApprover(
            self._request_permission,
            "",
            settings.repo,
            hunk_choices=self._hunk_choices,
            notify=lambda update: self._send(approver.session_id, [update]),
        )
        files = ClientFiles.offered(self._conn, self._client_capabilities)
        try:
            engine = await Engine.open(settings, approver, resume=resume, editor=files)
        except SessionError as exc:
            raise RequestError(-32002, safe_text(str(exc)), {"sessionId": resume}) from exc
        approver.session_id = engine.session_id
        if files is not None:
            files.session_id = engine.session_id
        pending = engine.take_notices()
        configs, refused = mcp_configs(mcp_servers)
        engine.add_mcp_servers(configs)
        if refused:
            pending.append("MCP servers over SSE are not supported: " + ", ".join(refused))
        session = AcpSession(engine, approver, EventUpdates(settings.repo), pending)
        self._sessions[engine.session_id] = session
        log.info("ACP session %s on %s", engine.session_id, settings.repo)
        return session

    def _settings(self, cwd: str) -> Settings:
        path = Path(cwd)
        if not path.is_absolute() or not path.is_dir():
            raise RequestError.invalid_params({"message": f"cwd is not a folder: {cwd}"})
        args = argparse.Namespace(**vars(self._args))
        args.repo = str(path)
        try:
            return settings_from_args(args)
        except ConfigError as exc:
            # A repository can put escape sequences in it (its state folder's link target).
            raise RequestError(INTERNAL_ERROR, safe_text(str(exc))) from exc

    async def _request_permission(self, session_id: str, tool_call: Any, options: Any) -> Any:
        return await self._conn.request_permission(
            session_id=session_id, tool_call=tool_call, options=options
        )

    def _session(self, session_id: str) -> AcpSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise RequestError(-32002, f"no open session {session_id}", {"sessionId": session_id})
        return session

    # ------------------------------------------------------------------ turns

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        if session.engine.running:
            raise RequestError.invalid_request({"message": "a turn is already running"})
        session.cancelled = False
        for notice in session.pending:
            await self._send(session_id, session.updates.updates(ev.Notice(notice, "warning")))
        session.pending = []
        text = prompt_text(prompt)
        if text.strip() in STEPS:
            return await self._step(session, text.strip())
        stop = "end_turn"
        failed: ev.TurnFailed | None = None
        try:
            async with aclosing(session.engine.run_turn(text)) as events:
                async for event in events:
                    if session.cancelled and session.engine.running:
                        session.engine.cancel()  # asked before the turn had started
                    await session.approver.observe(event)
                    await self._send(session_id, session.updates.updates(event))
                    if isinstance(event, ev.TurnFinished):
                        stop = "max_turn_requests" if event.reason == "max_steps" else "end_turn"
                    elif isinstance(event, ev.TurnCancelled):
                        stop = "cancelled"
                    elif isinstance(event, ev.TurnFailed):
                        failed = event
        finally:
            session.approver.forget()
        if failed is not None:
            raise RequestError(
                INTERNAL_ERROR,
                safe_text(failed.error),
                {"hint": safe_text(failed.hint)} if failed.hint else None,
            )
        return PromptResponse(stop_reason=stop)  # type: ignore[arg-type]

    async def _step(self, session: AcpSession, command: str) -> PromptResponse:
        """`/undo` or `/redo` typed as the prompt: the engine's, told to the client (and its
        buffers, when it offers them) as the answer."""
        engine = session.engine
        try:
            reverted = await (engine.undo() if command == "/undo" else engine.redo())
            said = reverted.text
        except PatchError as exc:
            said = str(exc)
        await self._send(engine.session_id, session.updates.updates(ev.AssistantDelta(said)))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self._sessions.get(session_id)
        if session is None:
            return
        session.cancelled = True
        session.engine.cancel()

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        session = self._session(session_id)
        if mode_id not in MODES:
            raise RequestError.invalid_params({"message": f"unknown mode {mode_id!r}"})
        session.engine.set_mode(mode_id)  # type: ignore[arg-type]
        return SetSessionModeResponse()

    async def _send(self, session_id: str, updates: list[Any]) -> None:
        for update in updates:
            await self._conn.session_update(session_id=session_id, update=update)


def _modes(session: AcpSession) -> SessionModeState:
    return SessionModeState(
        current_mode_id=session.engine.mode,
        available_modes=[
            SessionMode(id=mode, name=MODE_TEXT[mode][0], description=MODE_TEXT[mode][1])
            for mode in MODES
        ],
    )
