"""`Engine`: the facade over the agent, the patch engine and the stores.

Open it with `await Engine.open(settings, approver)`: that picks the session
(new, `resume=ID` or `continue_latest`), recovers a patch commit a crash left
half done, and builds the model client and the tools, all off the event loop.
Then `run_turn(text)` / `plan(goal)` stream `core.events`; `cancel()` ends
the running turn (its stream ends with TurnCancelled); `aclose()` stops a
running turn and its tool, flushes the transcript and closes the client.

MCP servers (`.mcp.json`, the user's config, `add_mcp_servers`) start at
the first turn and stop at `aclose()`; `mcp_servers()` says how each one is.

Undo and restore wait asynchronously for another process's write lock (the
callback hears "waiting…", and cancelling the call ends the wait) and then
write on a worker thread. Every store (sessions, notes, todos, backups) is
read on a worker thread too: a UI on the same loop never freezes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from collections.abc import AsyncGenerator, Callable, Collection, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from hello_tui.agent.compaction import CompactResult
from hello_tui.agent.loop import Agent
from hello_tui.agent.tokens import TokenCounter
from hello_tui.config import Settings
from hello_tui.core.approval import Approver
from hello_tui.core.display import ChatMessage, DisplayEntry
from hello_tui.core.editor_files import EditorFiles
from hello_tui.core.events import Event, Notice, ToolOutputDelta
from hello_tui.core.markdown_fence import fence
from hello_tui.core.modes import ModeApprover
from hello_tui.engine.types import (
    MODES,
    Attachment,
    BackupComparison,
    BackupInfo,
    CommitResult,
    DiffSummary,
    FilePlan,
    HistoryEntry,
    LocalServer,
    Mode,
    ModelChoice,
    ModelChoices,
    Note,
    PatchPlan,
    PreflightResult,
    Reverted,
    SessionInfo,
    UsageTotals,
    UserCommand,
    note_patch_summary,
    parse_mode,
    with_attachments,
)
from hello_tui.llm import LLMClient
from hello_tui.mcp import McpManager, McpServerConfig, McpServerState
from hello_tui.mcp.budget import schema_budget
from hello_tui.store.sessions import Session, SessionStore, open_session
from hello_tui.store.todos import TodoStore
from hello_tui.store.transcript import TranscriptLog
from hello_tui.store.write_lock import WAITING_TEXT, lock_is_free, write_when_free
from hello_tui.tools.editor_texts import tell_editor
from hello_tui.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from hello_tui.tools.file_index import FileIndex

log = logging.getLogger(__name__)

OnWait = Callable[[str], None]
# The divider `/clear` leaves in the chat: the model saw nothing above it.
CONTEXT_CLEARED = "──── context cleared: the model starts afresh from here ────"


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
        editor: EditorFiles | None = None,
    ) -> None:
        """Use `Engine.open`; this only wires the parts together."""
        llm.settings = settings  # the engine's settings are its client's (see `settings`)
        self._editor = editor
        self._mode: Mode = parse_mode(settings.mode)
        # Every decision passes the mode first: auto-edit and read-only are enforced here.
        self.approver = ModeApprover(approver, lambda: self._mode, self._auto_accepted)
        self.llm = llm
        self.registry = registry
        self._counter = counter
        self._agent: Agent | None = None
        self._closed = False
        self._user_commands = 0
        self.mcp = McpManager(
            settings.repo,
            registry,
            log_dir=settings.state.logs,
            secrets=(settings.api_key,) if settings.api_key else (),
        )
        self._file_index: FileIndex | None = None
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
        editor: EditorFiles | None = None,
    ) -> Engine:
        """Raises SessionNotFound when `resume` names no saved session.

        `editor`: the user's editor, when the front-end offers its buffers: files are read
        from it and accepted patches (and undo) reach it too (tools/editor_texts.py).
        """
        await asyncio.to_thread(settings.state.ensure)
        session, notices = await asyncio.to_thread(
            open_session, settings.state, resume=resume, continue_latest=continue_latest
        )
        notices += await _recover(settings)
        notices += await asyncio.to_thread(_startup_notices, settings)
        if llm is None:
            llm = await asyncio.to_thread(LLMClient, settings)  # imports openai: slow
        if registry is None:
            registry = await asyncio.to_thread(_default_registry, settings)
        engine = cls(settings, approver, llm, registry, counter=counter, editor=editor)
        if settings.sources.get("mode", "default") == "default" and session.mode in MODES:
            # No mode was asked for: a resumed session keeps the one it was left in.
            engine._mode = parse_mode(session.mode)
        await engine._switch(session)
        engine.agent.notices.extend(notices)
        return engine

    # ------------------------------------------------------------------ state

    @property
    def settings(self) -> Settings:
        """The settings in use. One copy, the model client's: `set_model` hands it a new
        one, so the next request, the window probe and the price all follow the switch."""
        return self.llm.settings

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
        """The permission mode: the window's, kept across session switches like the model."""
        return self._mode

    @property
    def sandbox_status(self) -> str:
        """The status bar's words for the command sandbox ("sandbox: landlock v7", …)."""
        from hello_tui.tools.shell.sandbox import sandbox_status

        return sandbox_status(self.settings.sandbox)

    @property
    def usage(self) -> UsageTotals:
        """The session's totals so far (tokens and cost)."""
        return dataclasses.replace(self.agent.session.usage)

    @property
    def running(self) -> bool:
        return self._agent is not None and self._agent.running

    @property
    def context_budget(self) -> tuple[int, str] | None:
        """(tokens, where they come from): the model's window or the override. None before
        the first turn has learnt it."""
        budget = self.agent.budget
        return None if budget is None else (budget.tokens, budget.source)

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
        self.llm.settings = self.settings.with_changes(model=name)
        self.agent.session.model = name

    async def model_choices(self, recent_limit: int = 50) -> ModelChoices:
        """The models `/model` offers: in use, recently used (saved sessions), the endpoint's
        `/models` list, the provider's default, then other providers' defaults (not usable
        here: they need their own endpoint and key). The endpoint is never called without a key.
        """
        from hello_tui.config import PROVIDERS
        from hello_tui.llm.errors import LLMError

        current = self.settings.model
        seen = {current}
        choices = [ModelChoice(current, "in use")]

        def add(name: str, group: str, usable: bool = True) -> None:
            if name and name not in seen:
                seen.add(name)
                choices.append(ModelChoice(name, group, usable))

        for info in await self.sessions(limit=recent_limit):
            add(info.model, "recent")
        error = ""
        try:
            for name in await self.llm.list_models():
                add(name, "endpoint")
        except LLMError as exc:
            error = exc.message
        for provider in PROVIDERS:
            if provider.name == self.settings.provider:
                add(provider.model, "default")
        for provider in PROVIDERS:
            # "default" is a local server's placeholder, not a model anyone can pick.
            if provider.name != self.settings.provider and provider.model != "default":
                add(provider.model, provider.name, usable=False)
        return ModelChoices(choices, error)

    def set_mode(self, mode: str) -> Mode:
        """Switch the permission mode (`plan` means read-only); it applies to the next decision.

        Raises ValueError for an unknown mode."""
        self._mode = parse_mode(mode)
        self.agent.session.mode = self._mode
        return self._mode

    def _auto_accepted(self, plan: PatchPlan) -> None:
        """auto-edit applied a patch unasked: the chat shows its diff (and /undo reverts it)."""
        from hello_tui.patch.written_diff import written_diff

        if self._agent is not None:
            text = auto_applied_text(written_diff(plan, binary_literals=False))
            self._agent.ctx.emit(Notice(text=text, foldable=True))

    # ------------------------------------------------------------------ turns

    def run_turn(
        self, text: str, attachments: Sequence[Attachment] = ()
    ) -> AsyncGenerator[Event, None]:
        """A turn; attached files (`@path`) go with the text, each cut to its budget."""
        return self._turn_with_tools(with_attachments(text, attachments))

    async def _turn_with_tools(self, text: str) -> AsyncGenerator[Event, None]:
        # MCP servers start at the first turn, so their tools are offered from its first
        # model call; their notices (a server refused, failed, trimmed) open the turn.
        # Their schemas get a share of the context budget, so the model's window comes first.
        budget = await self.agent.learn_budget()
        self.mcp.set_token_budget(schema_budget(budget.tokens))
        async with aclosing(self.mcp.start_events(self.approver)) as starting:
            async for event in starting:
                yield event
        self.agent.notices.extend(self.mcp.take_notices())
        events = self.agent.run_turn(text)
        try:
            async for event in events:
                yield event
        finally:
            await events.aclose()

    def file_index(self) -> FileIndex:
        """The repository's files for `@` completion; the first call starts the walk on a
        thread (searches see what has been found so far)."""
        if self._file_index is None:
            from hello_tui.tools.file_index import FileIndex

            index = FileIndex(self.settings.repo, self.settings.state_dir_name)
            self._file_index = index
            threading.Thread(target=index.build, name="file-index", daemon=True).start()
        return self._file_index

    async def attachment(self, rel: str) -> Attachment:
        """A repository file as it goes with a message; raises ValueError (secrets, binary,
        outside the repo)."""
        from hello_tui.tools.file_index import read_attachment

        text, cut = await asyncio.to_thread(
            read_attachment, self.settings.repo, rel, state_dir_name=self.settings.state_dir_name
        )
        return Attachment(rel, text, cut)

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
        await self.mcp.aclose()
        await self.llm.aclose()

    # ------------------------------------------------------------------ MCP servers

    def mcp_servers(self) -> list[McpServerState]:
        """Every configured MCP server: where it comes from, its state, its tools."""
        return self.mcp.states()

    def add_mcp_servers(self, configs: list[McpServerConfig]) -> None:
        """Servers handed over by a client (an editor over ACP); they start at the next turn
        and need no approval to start (the client's user configured them), but every call
        to their tools is approved like any other."""
        self.mcp.add_servers(configs)

    def _on_retry(self, attempt: int, delay: float, reason: str) -> None:
        if self._agent is not None and self._agent.running:
            self._agent.on_retry(attempt, delay, reason)
        else:
            log.info("retrying a model request in %.1fs: %s", delay, reason)

    async def run_user_command(
        self, command: str, on_output: Callable[[str], None] | None = None
    ) -> UserCommand:
        """`!cmd`: the user's own command, through the terminal tool's parser, policy and
        sandbox (read-only runs at once, anything else asks the approver, the mode applies).
        Its output joins the model's context and the session's record."""
        from hello_tui.tools.terminal import TerminalArgs, TerminalTool

        self._idle("run a command")
        command = command.strip()
        if not command:
            raise ValueError("type a command after !")
        agent = self.agent
        self._user_commands += 1

        def emit(event: Event) -> None:
            if on_output is not None and isinstance(event, ToolOutputDelta):
                on_output(event.text)

        ctx = dataclasses.replace(agent.ctx, call_id=f"user-{self._user_commands}", emit=emit)
        result = await TerminalTool().run(TerminalArgs(command=command, timeout=None), ctx)
        agent.ctx.cwd = ctx.cwd  # a `cd` persists, as it does for the model's commands
        session = agent.session
        session.history.append(
            {"role": "user", "content": f"I ran `{command}` myself. Result:\n{result.text}"}
        )
        session.display.append(
            ChatMessage("notice", f"`!{command}`\n" + fence(result.text, "text"), session.turns)
        )
        await session.save_async()
        return UserCommand(command, result.status, result.text, result.declined)

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

    async def clear_context(self) -> str:
        """`/clear`: the model forgets the conversation (history, evidence, what it read);
        the session keeps its record, with a divider the chat and a resume show."""
        self._idle("clear the context")
        agent = self.agent
        session = agent.session
        session.history.clear()
        session.evidence.clear()
        agent.ctx.reads.clear()
        session.display.append(ChatMessage("notice", CONTEXT_CLEARED, session.turns))
        await session.save_async()
        return CONTEXT_CLEARED

    async def _switch(self, session: Session) -> None:
        previous = self._agent
        if previous is not None:
            await previous.aclose()
        # The model in use stays the engine's (flags, set_model); the session records it per turn.
        session.model = session.model or self.settings.model
        session.mode = self._mode
        todos = await asyncio.to_thread(_load_todos, self.settings, session.id)
        self._agent = self._make_agent(session, todos)
        if previous is not None:
            # The budget learnt for this endpoint and model holds in the next session too.
            self._agent.requests.carry_tokens(previous.context_tokens)

    def _make_agent(self, session: Session, todos: list[dict[str, Any]]) -> Agent:
        agent = Agent(
            self.llm,
            self.registry,
            self.approver,
            session,
            log=TranscriptLog(self.settings.state.logs / f"{session.id}.jsonl"),
            counter=self._counter,
            todos=todos,
        )
        agent.ctx.editor = self._editor
        return agent

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

    async def patch_summaries(self, notes: Sequence[Note]) -> dict[str, DiffSummary]:
        """For each "Patch applied" note among `notes` (by id), what its diff changed."""
        return await asyncio.to_thread(_patch_summaries, notes)

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
        from hello_tui.patch import UndoResult, undo_last

        result = await self._write(lambda: undo_last(self.settings, force=force), on_wait)
        files = ", ".join(result.summary_lines()) or "nothing changed"
        undone = result.patch if isinstance(result, UndoResult) else ""
        return await self._reverted(result, f"Undone: {files}", undone=undone or None)

    async def redo(self, on_wait: OnWait | None = None, *, force: bool = False) -> Reverted:
        """Step forward again: bring back the most recently undone patch."""
        from hello_tui.patch import redo_last

        result = await self._write(lambda: redo_last(self.settings, force=force), on_wait)
        files = ", ".join(result.summary_lines()) or "nothing changed"
        return await self._reverted(result, f"Redone: {files}")

    async def history(self) -> list[HistoryEntry]:
        """Applied patches and restores, newest first, each undone or not."""
        from hello_tui.patch.history import history

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

    async def _reverted(
        self, result: CommitResult, text: str, *, undone: str | None = None
    ) -> Reverted:
        """Undo and restore belong to the session's record too: a resume shows them.

        The user's editor, when there is one, is told the text put back first.
        """
        refused = await tell_editor(self._editor, self.settings, result, undone)
        if refused:
            text += "\nThe editor did not take the text put back of: " + "; ".join(refused)
        session = self.agent.session
        session.display.append(ChatMessage("result", text, session.turns))
        await session.save_async()
        return Reverted(result, text)


# ---------------------------------------------------------------- blocking helpers

# An auto-applied patch shows this many diff lines in the chat; the note keeps the whole.
AUTO_APPLIED_DIFF_LINES = 60


def auto_applied_text(diff: str) -> str:
    """The chat's entry for an auto-applied diff: its first line (all a folded entry shows)
    says what changed, file by file, as unidiff reads the diff."""
    from hello_tui.patch.diff_summary import diff_summary

    summary = diff_summary(diff)
    files = "; ".join(f.label() for f in summary.files)
    lines = diff.rstrip("\n").splitlines()
    shown = lines[:AUTO_APPLIED_DIFF_LINES]
    more = len(lines) - len(shown)
    tail = f"\n… {more} more line{'s' if more != 1 else ''} (the patch's note has them all)"
    return (
        f"Applied without review (auto-edit mode; /undo reverts it): {files}\n"
        + fence("\n".join(shown), "diff")
        + (tail if more > 0 else "")
    )


def _patch_summaries(notes: Sequence[Note]) -> dict[str, DiffSummary]:
    out: dict[str, DiffSummary] = {}
    for note in notes:
        summary = note_patch_summary(note.content)
        if summary is not None:
            out[note.id] = summary
    return out


def probe_local_servers() -> list[LocalServer]:
    """The setup dialog's "local server": which usual local ports serve `/v1/models`.
    Blocking (at most about one short timeout): call it from a worker thread."""
    from hello_tui.llm.local_servers import probe_local_servers as probe

    return probe()


def replan_with_edits(plan: PatchPlan, settings: Settings, edits: dict[str, str]) -> PatchPlan:
    """The review's `e`: the plan recomputed from the files the user rewrote.

    The patch engine's one re-planner, the same the apply_patch tool runs on the
    decision's `user_edits`, so the hunks the review shows after an edit (and the
    selection made on them) are the hunks that get written."""
    from hello_tui.patch.selection import replan_with_edits as replan

    return replan(plan, settings, edits)


def accepted_text(file: FilePlan, accepted: Collection[int]) -> str:
    """The file's text with only the `accepted` hunks (Hunk.index values) applied: what
    accepting now would write, and so what the review's editor starts from."""
    from hello_tui.patch.selection import select
    from hello_tui.patch.types import Risk

    if not file.hunks or {h.index for h in file.hunks} <= set(accepted):
        return file.new_text or ""
    kept = [h.index for h in file.hunks if h.index in accepted]
    chosen = select(PatchPlan([file], Risk(False, [])), {file.path: set(kept)} if kept else {})
    return chosen.files[0].new_text or "" if chosen.files else file.old_text or ""


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
