"""Sessions on screen: showing one, `/new`, `/clear`, and switching with `/resume`.

Every switch shows the session the engine now holds the same way: its chat,
its newest tool steps in the trace, its todo board and its totals.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING

from hello_tui.core.display import ChatMessage, DisplayEntry, DisplayRecorder, ToolStep
from hello_tui.core.terminal_text import safe_event
from hello_tui.screens.main.host import Host
from hello_tui.screens.main.messages import EngineStart
from hello_tui.screens.main.turns import TurnController
from hello_tui.widgets.chat_log import ChatEntry, foldable_entry

if TYPE_CHECKING:
    from hello_tui.engine.facade import Engine

log = logging.getLogger(__name__)

# A resumed session's trace shows its newest tool steps (the chat shows everything).
TRACE_REPLAY_STEPS = 40
SESSION_PICKER_LIMIT = 200
SESSIONS_GROUP = "sessions"


def chat_entries(display: Iterable[DisplayEntry]) -> list[ChatEntry]:
    """A session's display record as chat entries."""
    return [
        foldable_entry(e.role, e.text) if e.foldable else ChatEntry(e.role, e.text)
        for e in display
        if isinstance(e, ChatMessage)
    ]


def tool_steps(display: Iterable[DisplayEntry], limit: int = TRACE_REPLAY_STEPS) -> list[ToolStep]:
    return [e for e in display if isinstance(e, ToolStep)][-limit:]


class SessionController:
    def __init__(self, host: Host, turns: TurnController) -> None:
        self.host = host
        self.views = host.views
        self.turns = turns

    def show(self, start: EngineStart) -> None:
        """The engine's session on screen: its chat, newest tool steps, board and totals."""
        engine, status = start.engine, self.views.status
        status.protocol = engine.protocol
        status.model = engine.model
        status.mode = engine.mode
        status.sandbox = engine.sandbox_status
        usage = engine.usage
        status.tokens = usage.prompt_tokens + usage.completion_tokens
        status.cost = usage.cost
        self._reset_counts()
        shown = [safe_event(entry) for entry in start.display]  # a saved record is text too
        entries = chat_entries(shown)
        if entries:
            self.views.chat.load(entries)
        self.views.trace.replay(tool_steps(shown))
        self.views.todos.set_items(start.todos)
        self.turns.recorder = DisplayRecorder(turn=max((e.turn for e in start.display), default=0))
        for notice in start.notices:
            self.views.chat.add("notice", notice)

    def _run(self, work: Awaitable[None], name: str) -> None:
        self.host.run_worker(
            work, name=name, group=SESSIONS_GROUP, exclusive=True, exit_on_error=False
        )

    def _reset_counts(self) -> None:
        """The step and context counts are the last request's: none has been made since."""
        self.views.status.step = 0
        self.views.status.context = None

    def _wipe(self) -> None:
        self.views.chat.clear()
        self.views.trace.clear()

    # ------------------------------------------------------------ /clear and /new
    def clear(self) -> None:
        engine = self.turns.engine_if_idle("/clear")
        if engine is not None:
            self._run(self._clear(engine), "clear")

    async def _clear(self, engine: Engine) -> None:
        divider = await engine.clear_context()
        # The screen starts afresh too; a resume shows the earlier chat above the divider.
        self._wipe()
        self._reset_counts()
        self.views.chat.add("notice", divider)

    def new(self) -> None:
        engine = self.turns.engine_if_idle("/new")
        if engine is not None:
            self._run(self._new(engine), "new session")

    async def _new(self, engine: Engine) -> None:
        await engine.new_session()
        self._wipe()
        self.show(EngineStart(engine, [], [], []))
        self.views.chat.add("notice", f"New session `{engine.session_id}`.")

    # ------------------------------------------------------------ /resume
    def pick(self) -> None:
        """The session picker: title, date, turns and model of each, the current one marked."""
        engine = self.turns.engine_if_idle("/resume")
        if engine is not None:
            self.host.run_worker(
                self._pick(engine), name="session picker", group="picker", exit_on_error=False
            )

    async def _pick(self, engine: Engine) -> None:
        from hello_tui.screens.picker import PickerScreen, PickItem

        infos = await engine.sessions(limit=SESSION_PICKER_LIMIT)
        if not infos:
            self.views.chat.add("notice", "No saved sessions yet.")
            return
        current = engine.session_id
        items = [
            PickItem(
                info.id,
                info.title or "(no prompt yet)",
                f"{info.updated_at[:16].replace('T', ' ')} · "
                f"{info.turns} turn{'s' if info.turns != 1 else ''} · {info.model} · {info.id}",
                current=info.id == current,
            )
            for info in infos
        ]
        chosen = await self.host.push_screen_wait(PickerScreen("Resume a session", items))
        if chosen and chosen != current:
            self.resume(chosen)

    def resume(self, session_id: str) -> None:
        """Switch this window to a saved session: its chat, todos and model history."""
        engine = self.turns.engine_if_idle("/resume")
        if engine is not None:
            self._run(self._switch(engine, session_id), "resume")

    async def _switch(self, engine: Engine, session_id: str) -> None:
        from hello_tui.engine.types import SessionError, SessionNotFound

        try:
            await engine.load_session(session_id)
            start = EngineStart(engine, engine.display(), await engine.todos(), [])
        except SessionNotFound:
            self.views.chat.add("error", f"No saved session `{session_id}`; `/resume` lists them.")
            return
        except SessionError as exc:  # unreadable: it was set aside, the message says where
            log.warning("resume %s failed: %s", session_id, exc)
            self.views.chat.add("error", str(exc).replace("Starting a new session.", "").strip())
            return
        self._wipe()
        self.show(start)
