"""Running a turn: starting it, its worker, its events on screen, cancelling and ending it.

A turn runs in a Textual worker that iterates `Engine.run_turn` and only posts
messages; answer deltas are batched there, so a fast stream means a few dozen
UI updates a second, not one per token. What the chat shows comes from the
same display recorder the engine saves with the session, so a resumed session
looks as the live one did. `engine_if_idle` is the one guard every command
that must not overlap a turn goes through. The user's own `!command` runs in
the same worker group, so it and a turn never overlap either.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING

from textual.worker import Worker, WorkerState

from hello_tui.core import events as ev
from hello_tui.core import logs
from hello_tui.core.display import ChatMessage, DisplayEntry, DisplayRecorder
from hello_tui.core.markdown_fence import fence
from hello_tui.core.terminal_text import safe_event
from hello_tui.notify import TerminalNotifier
from hello_tui.screens.command_approval import USERS_OWN_COMMAND
from hello_tui.screens.main.engine_events import EngineEventView
from hello_tui.screens.main.host import Host
from hello_tui.screens.main.messages import AnswerChunk, EngineEvent
from hello_tui.widgets.chat_log import Role

if TYPE_CHECKING:
    from hello_tui.engine.facade import Engine
    from hello_tui.engine.types import Attachment

log = logging.getLogger(__name__)

# Answer deltas are flushed to the UI at most this often (seconds).
DELTA_FLUSH_INTERVAL = 0.05
TURN_GROUP = "turn"


class TurnController:
    def __init__(
        self,
        host: Host,
        events: EngineEventView,
        notifier: TerminalNotifier,
        attachments: Callable[[str], Awaitable[list[Attachment]]],
        on_idle: Callable[[bool], None],
    ) -> None:
        self.host = host
        self.views = host.views
        self.events = events
        self.notifier = notifier
        # `attachments(text)` awaits the files the prompt mentions; `on_idle(interrupted)` runs
        # once a turn's last words are on screen (the prompt sends what was queued).
        self._attachments = attachments
        self._on_idle = on_idle
        self.worker: Worker[None] | None = None
        self.running = False  # until the turn's last words are on screen
        self.closed = True  # the turn's closing event has been handled
        self.interrupted = False  # the last turn ended by Esc / ctrl+c
        self.recorder = DisplayRecorder()  # the chat's half of the session's display record
        self.pending: tuple[str, str | None] | None = None  # sent before the engine opened

    # ------------------------------------------------------------ the guard
    @property
    def interruptible(self) -> bool:
        return self.running and not self.closed

    def engine_if_idle(self, before: str) -> Engine | None:
        """The engine when no turn runs; otherwise None, and the chat says why `before` waits."""
        if self.running:
            self.views.chat.add(
                "notice", f"Wait for the turn to finish (Esc cancels it) before {before}."
            )
            return None
        if self.host.engine is None:
            self.views.chat.add(
                "notice", f"The agent is still starting; try {before} again in a moment."
            )
            return None
        return self.host.engine

    # ------------------------------------------------------------ starting
    def start(self, text: str, plan_goal: str | None = None) -> None:
        """Send `text` (or plan `plan_goal`); held until the engine is open. No turn may run."""
        assert not self.running, "a turn runs: the prompt queues what is sent meanwhile"
        host = self.host
        # The prompt is shown as it is sent; the recorder's copy of it is not shown again.
        self.views.chat.add("user", text)
        if host.engine is None:
            if host.engine_error:
                self.views.chat.add("error", f"No agent: {host.engine_error}")
                return
            self.pending = (text, plan_goal)
            self.views.chat.add("notice", "Starting the agent…")
            return
        self.launch(text, plan_goal)

    def send_pending(self) -> bool:
        """The engine is open: send what was typed before it was. False if nothing was."""
        if self.pending is None:
            return False
        (text, goal), self.pending = self.pending, None
        self.launch(text, goal)
        return True

    def launch(self, text: str, plan_goal: str | None) -> None:
        self.running = True
        self.closed = False
        self.host.set_state("thinking")
        self.worker = self.host.run_worker(
            self._run(text, plan_goal),
            name="turn",
            group=TURN_GROUP,
            exclusive=True,
            exit_on_error=False,
        )

    async def _run(self, text: str, plan_goal: str | None) -> None:
        engine = self.host.engine
        assert engine is not None
        post = self.host_post
        loop = asyncio.get_running_loop()
        pending: list[str] = []
        timer: asyncio.TimerHandle | None = None
        finished = False

        def flush() -> None:
            nonlocal timer
            if timer is not None:
                timer.cancel()
                timer = None
            if pending:
                post(AnswerChunk("".join(pending)))
                pending.clear()

        if plan_goal is not None:
            stream = engine.plan(plan_goal)
        else:
            stream = engine.run_turn(text, await self._attachments(text))
        try:
            async with aclosing(stream) as events:
                async for raw in events:
                    event = safe_event(raw)  # what reaches the screen is text, never control
                    if isinstance(event, ev.AssistantDelta):
                        pending.append(event.text)
                        # Deltas go out together a moment later, however the stream pauses.
                        if timer is None:
                            timer = loop.call_later(DELTA_FLUSH_INTERVAL, flush)
                    else:
                        flush()
                        finished = finished or isinstance(event, ev.TURN_ENDINGS)
                        post(EngineEvent(event))
        except asyncio.CancelledError:
            flush()
            if not finished:
                post(EngineEvent(ev.TurnCancelled()))
            raise
        except Exception as exc:  # an engine bug is shown and logged, never raised
            log.exception("the turn's event stream failed")
            flush()
            error = f"{type(exc).__name__}: {exc}"
            post(EngineEvent(ev.TurnFailed(error, logs.internal_error_hint())))
            return
        flush()
        if not finished:  # the stream ended without its closing event: close the turn here
            post(EngineEvent(ev.TurnCancelled()))

    def host_post(self, message: AnswerChunk | EngineEvent) -> None:
        self.host.post_message(message)

    # ------------------------------------------------------------ cancelling
    def cancel(self) -> None:
        if self.worker is None or self.closed:
            return
        engine = self.host.engine
        if engine is not None and engine.running:
            engine.cancel()  # the stream ends with TurnCancelled
        else:
            self.worker.cancel()

    def worker_changed(self, worker: Worker[object], state: WorkerState) -> None:
        if (
            worker is self.worker
            and state in (WorkerState.CANCELLED, WorkerState.ERROR)
            and not self.closed
        ):
            # The worker ended without its closing event reaching us.
            self.host_post(EngineEvent(ev.TurnCancelled()))

    def turn_state(self, state: str) -> None:
        """A state the approver reports; ignored once the turn is closed."""
        if not self.closed:
            self.host.set_state(state)

    # ------------------------------------------------------------ its events
    def answer_chunk(self, text: str) -> None:
        self.recorder.feed(ev.AssistantDelta(text=text))
        self.views.chat.stream_write(text)

    def engine_event(self, event: ev.Event) -> None:
        if self.closed and isinstance(event, ev.TURN_ENDINGS):
            return  # the turn was closed already (e.g. a cancel raced its last event)
        self.events.show(event)
        if isinstance(event, ev.TURN_ENDINGS):
            # What was streamed goes into the chat first: what the ending says (cancelled,
            # failed, stopped at the step limit) comes after the answer it ends.
            self.views.chat.stream_finish()
        for entry in self.recorder.feed(event):
            self._show(entry)
        if isinstance(event, ev.TURN_ENDINGS):
            self._end(event)

    def _show(self, entry: DisplayEntry) -> None:
        """A recorded entry on screen, unless it is there already (the prompt, a streamed reply)."""
        if not isinstance(entry, ChatMessage) or entry.role == "user" or entry.streamed:
            return
        self.views.chat.add(entry.role, entry.text, foldable=entry.foldable)

    def _end(self, event: ev.Event) -> None:
        self.views.chat.stream_finish()
        if isinstance(event, ev.TurnFinished):
            self.notifier.notify(f"Turn finished: {event.answer or 'no answer'}")
        elif isinstance(event, ev.TurnFailed):
            self.notifier.notify(f"The turn failed: {event.error}")
        if isinstance(event, ev.TurnFinished):
            trace_status = "answered"
        elif isinstance(event, ev.TurnFailed):
            trace_status = "error"
        else:
            trace_status = "cancelled"
        self.closed = True
        self.interrupted = isinstance(event, ev.TurnCancelled)
        self.views.trace.turn_ended(trace_status)
        if self.host.engine is not None:
            self.views.status.protocol = self.host.engine.protocol
        self.host.set_state("idle")
        # The turn is over for the user once its last words are on screen.
        self.views.chat.call_when_shown(self._shown_on_screen)

    def _shown_on_screen(self) -> None:
        self.running = False
        self.host.refresh_bindings()
        self.views.prompt.focus()
        self._on_idle(self.interrupted)

    # ------------------------------------------------------------ !command
    def run_user_command(self, line: str, command: str) -> None:
        """`!cmd` (the whole `line` as typed): the user's own command through the terminal's
        policy and sandbox."""
        engine = self.engine_if_idle("running a command")
        if engine is None:
            return
        self.views.chat.add("user", line)
        self.running = True
        self.host.set_state("running a tool")
        self.host.run_worker(
            self._user_command(engine, command),
            name="user command",
            group=TURN_GROUP,
            exclusive=True,
            exit_on_error=False,
        )

    async def _user_command(self, engine: Engine, command: str) -> None:
        USERS_OWN_COMMAND.set(True)  # in this worker's own context: its approval is the user's
        try:
            result = await engine.run_user_command(command)
        except Exception as exc:  # shown and logged; the app stays usable
            log.exception("!%s failed", command)
            self.views.chat.add("error", f"`!{command}` failed: {exc}")
            return
        finally:
            self.running = False
            self.host.set_state("idle")
        role: Role = "error" if result.status == "error" else "notice"
        self.views.chat.add(role, fence(result.text, "text"))
