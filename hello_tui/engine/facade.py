"""`Engine`: the facade over the agent, the patch engine and the stores.

Open it with `await Engine.open(settings, approver)`: that picks the session
(new, `resume=ID` or `continue_latest`), recovers a patch commit a crash left
half done, and builds the model client and the tools, all off the event loop.
Then `run_turn(text)` / `plan(goal)` stream `core.events`; `cancel()` ends
the running turn (its stream ends with TurnCancelled); `aclose()` stops a
running turn and its tool, flushes the transcript and closes the client.

Undo and restore wait asynchronously for another process's write lock (the
callback hears "waiting…", and cancelling the call ends the wait) and then
write on a worker thread. Every store (sessions, notes, todos, backups) is
read on a worker thread too: a UI on the same loop never freezes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncGenerator, Callable
from typing import Any, cast

from hello_tui.agent.compaction import CompactResult
from hello_tui.agent.loop import Agent
from hello_tui.agent.tokens import TokenCounter
from hello_tui.config import Settings
from hello_tui.core.approval import Approver
from hello_tui.core.display import ChatMessage, DisplayEntry
from hello_tui.core.events import Event
from hello_tui.engine.types import (
    MODES,
    BackupComparison,
    BackupInfo,
    CommitResult,
    HistoryEntry,
    Mode,
    Note,
    PreflightResult,
    Reverted,
    SessionInfo,
    UsageTotals,
)
from hello_tui.llm import LLMClient
from hello_tui.store.sessions import Session, SessionStore, open_session
from hello_tui.store.todos import TodoStore
from hello_tui.store.transcript import TranscriptLog
from hello_tui.store.write_lock import WAITING_TEXT, lock_is_free, write_when_free
from hello_tui.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

OnWait = Callable[[str], None]


class EngineBusy(RuntimeError):
    """The call needs the engine idle, and a turn is running."""


class Engine:
    def __init__(
        self,
        settings: Settings,
        approver: Approver,
        llm: LLMClient,
        registry: ToolRegistry,
        *,
        counter: TokenCounter | None = None,
    ) -> None:
        """Use `Engine.open`; this only wires the parts together."""
        self.settings = settings
        self.approver = approver
        self.llm = llm
        self.registry = registry
        self._counter = counter
        self._agent: Agent | None = None
        self._closed = False
        if llm.on_retry is None:
            llm.on_retry = self._on_retry

    @classmethod
    async def open(
        cls,
        settings: Settings,
        approver: Approver,
        *,
        resume: str | None = None,
        continue_latest: bool = False,
        llm: LLMClient | None = None,
        registry: ToolRegistry | None = None,
        counter: TokenCounter | None = None,
    ) -> Engine:
        """Raises SessionNotFound when `resume` names no saved session."""
        # The engine's own copy: switching the model must not change the caller's settings.
        settings = dataclasses.replace(settings)
        session, notices = await asyncio.to_thread(
            open_session, settings.state, resume=resume, continue_latest=continue_latest
        )
        notices += await _recover(settings)
        notices += await asyncio.to_thread(_startup_notices, settings)
        if llm is None:
            llm = await asyncio.to_thread(LLMClient, settings)  # imports openai: slow
        else:
            llm.settings = settings  # so that set_model reaches the client
        if registry is None:
            registry = await asyncio.to_thread(_default_registry, settings)
        engine = cls(settings, approver, llm, registry, counter=counter)
        await engine._switch(session)
        engine.agent.notices.extend(notices)
        return engine

    # ------------------------------------------------------------------ state

    @property
    def agent(self) -> Agent:
        if self._agent is None:
            raise RuntimeError("the engine is not open")
        return self._agent

    @property
    def session_id(self) -> str:
        return self.agent.session.id

    @property
    def protocol(self) -> str:
        """The dialect in use: "tools" or "react" (auto switches for good when tools fail)."""
        return self.agent.protocol

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def mode(self) -> Mode:
        mode = self.agent.session.mode
        return cast(Mode, mode) if mode in MODES else "ask"

    @property
    def usage(self) -> UsageTotals:
        """The session's totals so far (tokens and cost)."""
        return dataclasses.replace(self.agent.session.usage)

    @property
    def running(self) -> bool:
        return self._agent is not None and self._agent.running

    @property
    def context_usage(self) -> tuple[int, int] | None:
        """(tokens, budget) of the last request: messages and tool schemas. None before one."""
        built = self.agent.prompts.last_context
        return None if built is None else (built.used, built.budget)

    async def compact(self) -> CompactResult:
        """`/compact`: the older history becomes one pinned summary (a model call sized to
        fit, a mechanical summary if it fails); the session is saved. `.text` says what
        was done. Raises EngineBusy while a turn runs (the loop compacts on its own)."""
        self._idle("compact the conversation")
        return await self.agent.compact()

    def take_notices(self) -> list[str]:
        """Notices from opening (a recovered patch, a corrupt session set aside). Those not
        taken are said at the start of the next turn instead."""
        notices, self.agent.notices = self.agent.notices, []
        return notices

    def display(self) -> list[DisplayEntry]:
        """The session's record for the screen: chat messages and tool steps, in order."""
        return list(self.agent.session.display)

    def set_model(self, name: str) -> None:
        name = name.strip()
        if not name:
            raise ValueError("a model name cannot be empty")
        self.settings.model = name
        self.agent.session.model = name

    def set_mode(self, mode: Mode) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.agent.session.mode = mode

    # ------------------------------------------------------------------ turns

    def run_turn(self, text: str) -> AsyncGenerator[Event, None]:
        return self.agent.run_turn(text)

    def plan(self, goal: str) -> AsyncGenerator[Event, None]:
        """`:plan <goal>`: a turn with one planning call (no tools, nothing written)."""
        return self.agent.plan(goal)

    def cancel(self) -> None:
        """End the running turn: its tool is stopped and its stream ends with TurnCancelled."""
        if self._agent is not None:
            self._agent.cancel()

    async def preflight(self) -> PreflightResult:
        """One tiny request proving the key, URL and model work (never raises)."""
        return await self.llm.preflight()

    async def aclose(self) -> None:
        """Stop a running turn and its tool, flush the transcript, close the model client."""
        if self._closed:
            return
        self._closed = True
        if self._agent is not None:
            await self._agent.aclose()
        await self.llm.aclose()

    def _on_retry(self, attempt: int, delay: float, reason: str) -> None:
        if self._agent is not None and self._agent.running:
            self._agent.on_retry(attempt, delay, reason)
        else:
            log.info("retrying a model request in %.1fs: %s", delay, reason)

    # ------------------------------------------------------------------ sessions

    async def sessions(self, limit: int = 50) -> list[SessionInfo]:
        """Saved sessions, newest first: id, title (the first prompt), dates, turns, model."""
        return await asyncio.to_thread(SessionStore(self.settings.state).infos, limit)

    async def load_session(self, session_id: str) -> None:
        """Switch to a saved session (raises SessionNotFound / SessionCorrupt)."""
        self._idle("switch sessions")
        session = await asyncio.to_thread(SessionStore(self.settings.state).load, session_id)
        await self._switch(session)

    async def new_session(self) -> None:
        self._idle("start a new session")
        await self._switch(SessionStore(self.settings.state).new())

    async def _switch(self, session: Session) -> None:
        if self._agent is not None:
            await self._agent.aclose()
        # The model in use stays the engine's (flags, set_model); the session records it per turn.
        session.model = session.model or self.settings.model
        todos = await asyncio.to_thread(_load_todos, self.settings, session.id)
        self._agent = self._make_agent(session, todos)

    def _make_agent(self, session: Session, todos: list[dict[str, Any]]) -> Agent:
        return Agent(
            self.settings,
            self.llm,
            self.registry,
            self.approver,
            session,
            log=TranscriptLog(self.settings.state.logs / f"{session.id}.jsonl"),
            counter=self._counter,
            todos=todos,
        )

    def _idle(self, what: str) -> None:
        if self.running:
            raise EngineBusy(f"a turn is running; finish or cancel it to {what}")

    # ------------------------------------------------------------------ todos and notes

    async def todos(self) -> list[dict[str, Any]]:
        """The session's todo list, as the board and the `todo` tool both see it."""
        return await asyncio.to_thread(_load_todos, self.settings, self.session_id)

    async def notes(self, note_type: str | None = None, limit: int | None = None) -> list[Note]:
        from hello_tui.store.notes import NoteStore

        store = NoteStore(self.settings.state.notes)
        return await asyncio.to_thread(store.list, note_type, limit)

    async def read_note(self, note_id: str) -> Note:
        """Raises NoteError when there is no such note."""
        from hello_tui.store.notes import NoteStore

        return await asyncio.to_thread(NoteStore(self.settings.state.notes).read, note_id)

    # ------------------------------------------------------------------ backups, undo, restore

    async def backups(self) -> list[BackupInfo]:
        from hello_tui.patch import list_backups

        return await asyncio.to_thread(list_backups, self.settings)

    async def read_backup(self, backup: str, relpath: str) -> bytes | None:
        from hello_tui.patch import read_backup

        return await asyncio.to_thread(read_backup, self.settings, backup, relpath)

    async def compare_backup(self, backup: str, relpath: str) -> BackupComparison:
        """A backup's copy of `relpath` and the file as it is now, as text."""
        return await asyncio.to_thread(_compare_backup, self.settings, backup, relpath)

    async def undo(self, on_wait: OnWait | None = None, *, force: bool = False) -> Reverted:
        """Step back one more applied patch (or restore); each call goes one further back.

        Raises PatchError ("Nothing to undo", …); UndoRefused (its `paths`) when files
        changed since the patch wrote them, unless `force` (their edits are backed up first).
        """
        from hello_tui.patch import undo_last

        result = await self._write(lambda: undo_last(self.settings, force=force), on_wait)
        files = ", ".join(result.summary_lines()) or "nothing changed"
        return await self._reverted(result, f"Undone: {files}")

    async def redo(self, on_wait: OnWait | None = None, *, force: bool = False) -> Reverted:
        """Step forward again: bring back the most recently undone patch."""
        from hello_tui.patch import redo_last

        result = await self._write(lambda: redo_last(self.settings, force=force), on_wait)
        files = ", ".join(result.summary_lines()) or "nothing changed"
        return await self._reverted(result, f"Redone: {files}")

    async def history(self) -> list[HistoryEntry]:
        """Applied patches and restores, newest first, each undone or not."""
        from hello_tui.patch import history

        return await asyncio.to_thread(history, self.settings)

    async def restore(
        self, backup: str, relpath: str | None = None, on_wait: OnWait | None = None
    ) -> Reverted:
        """Put back one file (or every file) of a backup; the current version is backed up."""
        from hello_tui.patch import restore_from_backup

        result = await self._write(
            lambda: restore_from_backup(self.settings, backup, relpath), on_wait
        )
        files = ", ".join(result.summary_lines()) or "nothing changed"
        undo = (
            f" (previous version saved in `{result.backup_dir}`; /undo reverts)"
            if result.backup_dir
            else ""
        )
        return await self._reverted(result, f"Restored from {backup}: {files}{undo}")

    async def _write(
        self, work: Callable[[], CommitResult], on_wait: OnWait | None
    ) -> CommitResult:
        self._idle("change files")

        def waiting() -> None:
            if on_wait is not None:
                on_wait(WAITING_TEXT)

        return await write_when_free(self.settings.state.lock_file, work, waiting)

    async def _reverted(self, result: CommitResult, text: str) -> Reverted:
        """Undo and restore belong to the session's record too: a resume shows them."""
        session = self.agent.session
        session.display.append(ChatMessage("result", text, session.turns))
        await session.save_async()
        return Reverted(result, text)


# ---------------------------------------------------------------- blocking helpers


def _startup_notices(settings: Settings) -> list[str]:
    """Trust notices (a key held back from a repo's URL) and the sandbox's state."""
    from hello_tui.tools.shell.sandbox import startup_notices

    return startup_notices(settings)


def _default_registry(settings: Settings) -> ToolRegistry:
    from hello_tui.tools import build_registry

    return build_registry(settings)


def _load_todos(settings: Settings, session_id: str) -> list[dict[str, Any]]:
    from hello_tui.store.todos import TodoError

    try:
        return [item.to_dict() for item in TodoStore(settings.state.todos, session_id).load()]
    except (TodoError, OSError):
        log.warning("the todo list of session %s is unreadable", session_id, exc_info=True)
        return []


def _compare_backup(settings: Settings, backup: str, relpath: str) -> BackupComparison:
    from hello_tui.patch import read_backup

    old = read_backup(settings, backup, relpath)
    try:
        current = (settings.repo / relpath).read_bytes().decode("utf-8", errors="replace")
    except OSError:
        current = ""
    old_text = None if old is None else old.decode("utf-8", errors="replace")
    return BackupComparison(backup, relpath, old_text, current)


async def _recover(settings: Settings) -> list[str]:
    return await asyncio.to_thread(_recover_blocking, settings)


def _recover_blocking(settings: Settings) -> list[str]:
    """Roll back (or finish) a commit killed midway, before anyone looks at the tree."""
    from hello_tui.patch import PatchError, recover

    if not settings.state.root.is_dir():
        return []
    if not lock_is_free(settings.state.lock_file):
        return []  # another hello-tui is writing: its own commit recovers the journal
    try:
        recovered = recover(settings)
    except (PatchError, OSError) as exc:
        log.warning("recovery failed", exc_info=True)
        return [f"An interrupted patch could not be recovered: {exc}"]
    if recovered:
        return ["An interrupted patch was recovered: " + "; ".join(recovered)]
    return []
