"""What each engine event does to the main screen's widgets: one typed handler per event type.

The table is keyed by the event's class, so a renamed event is a type error,
not a silently unhandled string. Events that only change the chat (results,
notices) are shown through the display recorder instead (see `turns`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from hello_tui.core import events as ev
from hello_tui.screens.main.host import Host

E = TypeVar("E", bound=ev.Event)

LOCK_WAIT_STATE = "waiting for another hello-tui"
MCP_STARTING = "starting MCP servers"


class EngineEventView:
    def __init__(self, host: Host, refresh_sidebar: Callable[[], None]) -> None:
        self.host = host
        self.views = host.views
        self._handlers: dict[type[ev.Event], Callable[[Any], None]] = {}
        self._on(ev.TurnStarted, self._turn_started)
        self._on(ev.StepStarted, self._step_started)
        self._on(ev.ThoughtDelta, lambda e: self.views.trace.thought(e.step, e.text))
        self._on(ev.ToolCallStarted, self._tool_started)
        self._on(ev.ToolOutputDelta, lambda e: self.views.trace.tool_output(e.call_id, e.text))
        self._on(ev.ToolProgress, lambda e: self.views.trace.tool_output(e.call_id, e.text + "\n"))
        self._on(ev.McpStartup, self._mcp_startup)
        self._on(ev.ToolCallFinished, self._tool_finished)
        self._on(ev.PatchProposed, lambda e: host.set_state("waiting for you"))
        self._on(ev.PatchResolved, lambda e: refresh_sidebar())
        self._on(ev.WriteLockWait, self._lock_wait)
        self._on(ev.CommandApprovalNeeded, lambda e: host.set_state("waiting for you"))
        self._on(ev.TodoChanged, lambda e: self.views.todos.set_items(e.items))
        self._on(ev.NoteWritten, lambda e: refresh_sidebar())
        self._on(ev.AnswerRestarted, lambda e: self.views.chat.stream_discard())
        self._on(ev.ContextUsage, self._context_usage)
        self._on(ev.Usage, self._usage)

    def _on(self, kind: type[E], handler: Callable[[E], None]) -> None:
        self._handlers[kind] = handler

    def show(self, event: ev.Event) -> None:
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(event)

    def _turn_started(self, event: ev.TurnStarted) -> None:
        self.views.status.step = 0
        self.views.trace.turn_started(event.turn)
        self.host.set_state("thinking")

    def _step_started(self, event: ev.StepStarted) -> None:
        self.views.status.step = event.step
        self.views.status.max_steps = event.max_steps
        self.views.trace.step_started(event.step)
        self.host.set_state("thinking")

    def _tool_started(self, event: ev.ToolCallStarted) -> None:
        # Text streamed before a tool call is the model thinking aloud: keep it in the chat.
        self.views.chat.stream_finish()
        self.views.trace.tool_started(event.step, event.call_id, event.tool, event.arguments)
        self.host.set_state("running a tool")

    def _tool_finished(self, event: ev.ToolCallFinished) -> None:
        self.views.trace.tool_finished(event.call_id, event.status, event.text, event.duration)
        self.host.set_state("thinking")

    def _mcp_startup(self, event: ev.McpStartup) -> None:
        waiting = event.phase == "starting" or event.ended < event.total
        self.host.set_state(
            f"{MCP_STARTING} {event.ended}/{event.total}" if waiting else "thinking"
        )

    def _lock_wait(self, event: ev.WriteLockWait) -> None:
        self.host.set_state(LOCK_WAIT_STATE if event.phase == "waiting" else "running a tool")

    def _context_usage(self, event: ev.ContextUsage) -> None:
        self.views.status.context = (event.used, event.budget)
        if event.source:
            self.views.status.tooltip = f"context budget {event.budget:,} tokens: {event.source}"

    def _usage(self, event: ev.Usage) -> None:
        # The event carries the session's totals: assign them.
        self.views.status.tokens = event.session_prompt_tokens + event.session_completion_tokens
        self.views.status.cost = event.cost
