"""The full-screen app: wires the engine's events to the chat, trace, todo board, status bar and sidebar.

The app talks to the engine through the facade only (`hello_tui.engine`), the
event and approval types (`hello_tui.core`) and the settings. A turn runs in a
Textual worker that iterates `Engine.run_turn` and only posts messages; the
`on_*` handlers own the widgets. Answer deltas are batched in the worker so a
fast stream means a few dozen UI updates a second, not one per token. What the
chat shows comes from the same display recorder the engine saves with the
session, so a resumed session looks as the live one did. Decisions (patch
review, command approval) come through the approver, whose screens are pushed
with `push_screen_wait` from inside the turn. The engine is opened after the
first frame so start-up stays fast; every disk access goes through the
facade, which does it off the event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import signal
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, TextArea
from textual.worker import Worker, WorkerState

from hello_tui.config import ConfigError, Settings
from hello_tui.core import events as ev
from hello_tui.core import logs
from hello_tui.core.approval import (
    Approver,
    CommandVerdict,
    PatchDecision,
    ServerStartRequest,
    ServerVerdict,
    ToolCallRequest,
    ToolVerdict,
)
from hello_tui.core.display import ChatMessage, DisplayEntry, DisplayRecorder, ToolStep, hint_suffix
from hello_tui.core.markdown_fence import fence
from hello_tui.notify import TerminalNotifier
from hello_tui.screens.decision import SYSTEM_CLOCK, ArmingClock, DecisionModal, TypeAhead
from hello_tui.widgets.chat_log import ChatEntry, ChatView, foldable_entry
from hello_tui.widgets.completion import (
    AttachmentChips,
    CompletionList,
    Suggestion,
    completion_target,
    mentioned_paths,
)
from hello_tui.widgets.prompt_input import PromptInput
from hello_tui.widgets.queued_prompts import QueuedPrompts
from hello_tui.widgets.sidebar import BackupPick, BackupTree, Sidebar
from hello_tui.widgets.status_bar import StatusBar
from hello_tui.widgets.todo_board import TodoBoard
from hello_tui.widgets.trace import TracePanel

if TYPE_CHECKING:
    from hello_tui.engine.facade import Engine
    from hello_tui.engine.types import Attachment

log = logging.getLogger(__name__)
# Signals that end the app the way ctrl+q does (the session is saved): exit 128 + N.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)

# Answer deltas are flushed to the UI at most this often (seconds).
DELTA_FLUSH_INTERVAL = 0.05
CTRL_C_WINDOW = 2.0
# A resumed session's trace shows its newest tool steps (the chat shows everything).
TRACE_REPLAY_STEPS = 40
LOCK_WAIT_STATE = "waiting for another hello-tui"
SESSION_PICKER_LIMIT = 200
FILE_SUGGESTIONS = 12
MODE_NOTICES = {
    "ask": "Every patch and every command that needs approval asks you first.",
    "auto-edit": "Patches within the limits apply without review (/undo reverts); "
    "high-risk patches and commands still ask.",
    "read-only": "Plan mode: nothing is written and no command that needs approval runs.",
}
# What /init asks the agent; the AGENTS.md it proposes goes through the normal review.
INIT_PROMPT = (
    "/init: explore this repository (its layout, languages, how to build, test and lint it, "
    "its conventions) and propose an AGENTS.md at the repository root for coding agents: "
    "the project in two sentences, the commands to build, test and lint, the layout, the "
    "conventions to follow, and what not to touch. If an AGENTS.md exists, propose "
    "improvements to it instead. Propose it as a patch."
)

# What a desktop notification says when a decision modal waits (by the modal's class, or
# the nearest base class named here).
WAITING_TEXT = {
    "PatchReviewScreen": "A patch waits for your review.",
    "CommandApprovalScreen": "A command waits for your approval.",
    "ToolApprovalScreen": "An MCP tool call waits for your approval.",
    "ServerApprovalScreen": "An MCP server waits for your approval to start.",
    "HighRiskConfirmScreen": "A high-risk patch waits for your confirmation.",
    "ConfirmScreen": "A question waits for your answer.",
}

EngineFactory = Callable[[Settings, Approver], Awaitable["Engine"]]
ApproverFactory = Callable[["HelloApp"], Approver]


# ---------------------------------------------------------------- messages


class EngineEvent(Message):
    """One engine event, posted by the turn worker."""

    def __init__(self, event: ev.Event) -> None:
        super().__init__()
        self.event = event


class AnswerChunk(Message):
    """Several AssistantDelta texts joined by the worker."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class TurnState(Message):
    def __init__(self, state: str) -> None:
        super().__init__()
        self.state = state


@dataclass
class EngineStart:
    """What the app shows once the engine is open: the session's record and board."""

    engine: Engine
    display: list[DisplayEntry]
    todos: list[dict[str, Any]]
    notices: list[str]


class EngineReady(Message):
    def __init__(self, start: EngineStart | None, error: str = "") -> None:
        super().__init__()
        self.start = start
        self.error = error


@dataclass
class PreflightReport:
    ok: bool
    message: str
    hint: str


class PreflightDone(Message):
    def __init__(self, report: PreflightReport) -> None:
        super().__init__()
        self.report = report


# ---------------------------------------------------------------- approvals


class StateTrackingApprover:
    """Wraps the UI approver so the status bar says "waiting for you" while a modal is open."""

    def __init__(self, app: HelloApp, inner: Approver) -> None:
        self.app = app
        self.inner = inner

    async def review_patch(self, plan: Any) -> PatchDecision:
        self.app.post_message(TurnState("waiting for you"))
        try:
            return await self.inner.review_patch(plan)
        finally:
            self.app.post_message(TurnState("running a tool"))

    async def approve_command(self, command: str, reason: str) -> CommandVerdict:
        self.app.post_message(TurnState("waiting for you"))
        try:
            return await self.inner.approve_command(command, reason)
        finally:
            self.app.post_message(TurnState("running a tool"))

    async def approve_tool_call(self, request: ToolCallRequest) -> ToolVerdict:
        self.app.post_message(TurnState("waiting for you"))
        try:
            return await self.inner.approve_tool_call(request)
        finally:
            self.app.post_message(TurnState("running a tool"))

    async def approve_server(self, request: ServerStartRequest) -> ServerVerdict:
        self.app.post_message(TurnState("waiting for you"))
        try:
            return await self.inner.approve_server(request)
        finally:
            self.app.post_message(TurnState("thinking"))


def default_approver(app: HelloApp) -> Approver:
    from hello_tui.screens.approver import TuiApprover

    return TuiApprover(app)


def default_engine_factory(resume: str | None, continue_latest: bool) -> EngineFactory:
    async def open_engine(settings: Settings, approver: Approver) -> Engine:
        from hello_tui.engine.facade import Engine

        return await Engine.open(settings, approver, resume=resume, continue_latest=continue_latest)

    return open_engine


def chat_entries(display: Iterable[DisplayEntry]) -> list[ChatEntry]:
    """A session's display record as chat entries."""
    return [
        foldable_entry(e.role, e.text) if e.foldable else ChatEntry(e.role, e.text)
        for e in display
        if isinstance(e, ChatMessage)
    ]


def tool_steps(display: Iterable[DisplayEntry], limit: int = TRACE_REPLAY_STEPS) -> list[ToolStep]:
    return [e for e in display if isinstance(e, ToolStep)][-limit:]


# ---------------------------------------------------------------- the app


class HelloApp(App[int]):
    TITLE = "hello-tui"
    # Absolute, so subclasses defined elsewhere (tests, benchmarks) find it too.
    CSS_PATH = Path(__file__).with_name("app.tcss")
    ENABLE_COMMAND_PALETTE = True
    # Where decision modals read the time (tests give a clock they step themselves).
    arming_clock: ArmingClock = SYSTEM_CLOCK
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    BINDINGS = [
        Binding(
            "escape", "cancel_turn", "Cancel turn", id="app.cancel", tooltip="Stop the running turn"
        ),
        Binding(
            "ctrl+b",
            "toggle_sidebar",
            "Sidebar",
            id="app.sidebar",
            tooltip="Notes and backups",
            priority=True,
        ),
        Binding(
            "shift+tab",
            "cycle_mode",
            "Mode",
            id="app.mode",
            tooltip="Cycle the permission mode: ask, auto-edit, read-only",
            priority=True,
        ),
        Binding(
            "pageup",
            "page_chat(-1)",
            "Scroll chat",
            show=False,
            id="app.chat_page_up",
            tooltip="Scroll the chat a page (the prompt keeps the focus)",
        ),
        Binding(
            "pagedown",
            "page_chat(1)",
            "Scroll chat",
            show=False,
            id="app.chat_page_down",
            tooltip="Scroll the chat a page (the prompt keeps the focus)",
        ),
        Binding(
            "ctrl+o",
            "toggle_fold",
            "Fold/unfold",
            show=False,
            id="app.toggle_fold",
            tooltip="Show or fold the newest applied diff in the chat (a click on it does too)",
        ),
        Binding("f1", "help", "Help", id="app.help", tooltip="Keys and commands"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", tooltip="Leave hello-tui", priority=True),
        Binding("ctrl+c", "ctrl_c", "Quit", show=False, id="app.ctrl_c", priority=True),
        Binding(
            "ctrl+x",
            "drop_queued",
            "Drop queued",
            id="app.drop_queued",
            tooltip="Drop the newest queued message",
            priority=True,  # before the prompt's own ctrl+x (cut); only while a message waits
        ),
    ]

    def __init__(
        self,
        settings: Settings,
        *,
        engine_factory: EngineFactory | None = None,
        approver_factory: ApproverFactory | None = None,
        resume: str | None = None,
        continue_latest: bool = False,
        preflight: bool = True,
        clock: Callable[[], float] = time.monotonic,
        initial_prompt: str = "",
        welcome: str = "",
    ) -> None:
        super().__init__()
        self.settings = settings
        # `--resume` with no id: a fresh session opens, then the session picker.
        self._pick_session_at_start = resume == ""
        self._engine_factory = engine_factory or default_engine_factory(
            resume or None, continue_latest
        )
        self._approver_factory = approver_factory or default_approver
        self._run_preflight = preflight
        self._clock = clock
        self.engine: Engine | None = None
        self.turn_worker: Worker[None] | None = None
        self.turn_running = False  # until the turn's last words are on screen
        self._turn_closed = True  # the turn's closing event has been handled
        self._recorder = DisplayRecorder()  # the chat's half of the session's display record
        self._write_worker: Worker[None] | None = None  # an undo/restore waiting for the lock
        self._last_ctrl_c = -CTRL_C_WINDOW * 2
        self._pending_prompt: tuple[str, str | None] | None = None  # sent before the engine
        self._turn_interrupted = False  # the last turn ended by Esc / ctrl+c
        self.preflight_report: PreflightReport | None = None
        self.engine_error = ""
        self._initial_prompt = initial_prompt
        self._welcome = welcome
        # Calls the user back (bell / desktop notification) only while the terminal is not
        # focused; decision modals already announced are not announced again.
        self.notifier = TerminalNotifier(
            settings.notifications,
            write=self._write_to_terminal,
            focused=lambda: self.app_focus,
            environ=os.environ,
            title=f"hello-tui ({settings.repo.name})",
        )
        self._announced: weakref.WeakSet[Screen[Any]] = weakref.WeakSet()

    # ------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        # Kept as attributes: handlers also run while a modal is the active screen,
        # where `query_one` would search the modal instead of the main screen.
        self.status = StatusBar(id="status")
        self.status.repo = self.settings.repo.name
        self.status.model = self.settings.model
        self.status.protocol = self.settings.protocol
        self.status.max_steps = self.settings.max_steps
        self.status.mode = self.settings.mode
        self.status.state = "starting"
        self.sidebar = Sidebar(id="sidebar")
        self.sidebar.display = False
        self.chat = ChatView(id="chat")
        self.prompt = PromptInput(
            id="prompt", placeholder="Ask for a change… (Enter sends, /help for commands)"
        )
        self.completion = CompletionList(id="completion")
        self.chips = AttachmentChips(id="chips")
        self.prompt.completion = self.completion
        self.queued = QueuedPrompts(id="queued")
        self.prompt.take_queued = self._edit_queued
        self.trace = TracePanel(id="trace", clock=self._clock)
        self.todos = TodoBoard(id="todos")
        yield self.status
        with Horizontal(id="body"):
            yield self.sidebar
            with Vertical(id="center"):
                yield self.chat
                yield self.completion
                yield self.chips
                yield self.queued
                yield self.prompt
            with Vertical(id="right"):
                yield self.trace
                yield self.todos
        yield Footer()

    def on_mount(self) -> None:
        self.prompt.focus()
        self.screen_change_signal.subscribe(self, self._screen_changed)
        if self._welcome:
            self.chat.add("notice", self._welcome)
        if self._initial_prompt:
            self.prompt.load_text(self._initial_prompt)
            self.prompt.move_cursor(self.prompt.document.end)
        if self.settings.model_configured:
            # Open the engine after the first frame: importing the client is the slow part.
            self.call_after_refresh(self._import_engine)
        else:
            # An after-refresh callback waits on the current screen's refresh, and the setup
            # dialog may be closed before it ever refreshes: schedule it on the app instead.
            self.open_setup()
            self.call_later(self._import_engine)
        self._install_stop_signals()

    async def on_unmount(self) -> None:
        self._remove_stop_signals()
        if self.engine is not None:
            await self.engine.aclose()  # cancels a running turn and saves the session

    def _install_stop_signals(self) -> None:
        """SIGTERM and SIGHUP (the terminal closed) end the app as ctrl+q does: saved."""
        loop = asyncio.get_running_loop()
        self._stop_signals: list[signal.Signals] = []
        for sig in STOP_SIGNALS:
            try:
                loop.add_signal_handler(sig, self._stop_on_signal, sig)
            except (NotImplementedError, RuntimeError, ValueError):
                continue  # not on this platform or not the main thread: the default stands
            self._stop_signals.append(sig)

    def _remove_stop_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in getattr(self, "_stop_signals", []):
            loop.remove_signal_handler(sig)
        self._stop_signals = []

    def _stop_on_signal(self, sig: signal.Signals) -> None:
        log.info("ending on %s: the session is saved on the way out", sig.name)
        self.exit(128 + int(sig))

    @work(thread=True, group="startup", exit_on_error=False)
    def _import_engine(self) -> None:
        # Heavy imports happen here, off the event loop; the engine opens on the loop.
        import openai  # noqa: F401

        import hello_tui.engine.facade  # noqa: F401

        self.call_from_thread(self._open_engine)

    @work(group="startup", exit_on_error=False)
    async def _open_engine(self) -> None:
        try:
            approver = StateTrackingApprover(self, self._approver_factory(self))
            engine = await self._engine_factory(self.settings, approver)
            start = EngineStart(
                engine, engine.display(), await engine.todos(), engine.take_notices()
            )
        except Exception as exc:  # shown on screen and logged; the app stays usable
            log.exception("the engine could not start")
            self.post_message(EngineReady(None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(EngineReady(start))

    @on(EngineReady)
    def _engine_ready(self, message: EngineReady) -> None:
        if message.start is None:
            self.engine_error = message.error
            self.chat.add("error", f"The agent could not start: {message.error}")
            self._set_state("idle")
            return
        start = message.start
        self.engine = start.engine
        self._show_session(start)
        self._set_state("idle")
        if self._run_preflight and self.settings.model_configured:
            self._preflight()
        if self._pending_prompt is not None:
            (text, goal), self._pending_prompt = self._pending_prompt, None
            self._launch(text, goal)
        elif self._pick_session_at_start:
            self._pick_session_at_start = False
            self.action_resume_list()

    def _show_session(self, start: EngineStart) -> None:
        """The engine's session on screen: its chat, newest tool steps, board and totals."""
        engine = start.engine
        self.status.protocol = engine.protocol
        self.status.model = engine.model
        self.status.mode = engine.mode
        self.status.sandbox = engine.sandbox_status
        usage = engine.usage
        self.status.tokens = usage.prompt_tokens + usage.completion_tokens
        self.status.cost = usage.cost
        entries = chat_entries(start.display)
        if entries:
            self.chat.load(entries)
        self.trace.replay(tool_steps(start.display))
        self.todos.set_items(start.todos)
        self._recorder = DisplayRecorder(turn=max((e.turn for e in start.display), default=0))
        for notice in start.notices:
            self.chat.add("notice", notice)

    @work(group="preflight", exit_on_error=False)
    async def _preflight(self) -> None:
        assert self.engine is not None
        result = await self.engine.preflight()
        self.post_message(PreflightDone(PreflightReport(result.ok, result.message, result.hint)))

    @on(PreflightDone)
    def _preflight_done(self, message: PreflightDone) -> None:
        self.preflight_report = message.report
        if not message.report.ok:
            hint = hint_suffix(message.report.message, message.report.hint)
            self.chat.add(
                "error",
                f"The model did not answer the start-up check: {message.report.message}{hint}",
            )

    # ------------------------------------------------------------ state and bindings
    def _set_state(self, state: str) -> None:
        self.status.state = state
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            return self._turn_interruptible() or self._write_worker is not None
        if action == "cycle_mode":
            # Only on the main screen: modals (the review's shift+tab) keep the key.
            return len(self.screen_stack) == 1 and self.engine is not None
        if action in ("page_chat", "toggle_fold"):
            return len(self.screen_stack) == 1  # a modal's own keys stay its own
        if action == "drop_queued":
            return bool(self.queued.items)
        return True

    @on(TurnState)
    def _turn_state(self, message: TurnState) -> None:
        if not self._turn_closed:
            self._set_state(message.state)

    # ------------------------------------------------------------ prompt and commands
    @on(TypeAhead)
    def _type_ahead(self, message: TypeAhead) -> None:
        # Keys a decision modal refused were typed for the prompt: they go there.
        self.prompt.take_type_ahead(message.key, message.character, message.pasted)

    @on(PromptInput.Submitted)
    def _submitted(self, message: PromptInput.Submitted) -> None:
        self.handle_input(message.text)

    def handle_input(self, raw: str) -> None:
        text = raw.strip()
        if not text:
            return
        lowered = text.lower()
        if lowered in (":q", ":quit"):
            self.exit(0)
            return
        if self.run_slash_command(text) or self.run_shell_line(text):
            return
        if lowered.startswith(":plan"):
            goal = text[len(":plan") :].strip()
            if not goal:
                self.chat.add("notice", "Usage: `:plan <goal>`")
                return
            self._start_turn(text, plan_goal=goal)
            return
        if text.startswith("/") and " " not in text:
            self.chat.add("notice", f"Unknown command {text}. Type /help for the list.")
            return
        self._start_turn(text)

    def show_mcp_servers(self) -> None:
        """`/mcp`: the configured MCP servers, their state and their tools, as a chat notice."""
        from hello_tui.engine.types import render_mcp_servers

        if self.engine is None:
            self.chat.add("notice", "The agent is not started yet; try /mcp again in a moment.")
            return
        listing = render_mcp_servers(self.engine.mcp_servers())
        self.chat.add(
            "notice", f"MCP servers (they start at the first turn):\n\n```text\n{listing}\n```"
        )

    def _start_turn(self, text: str, plan_goal: str | None = None) -> None:
        if self.turn_running:
            self._queue_prompt(text)
            return
        if not self.settings.model_configured:
            # Never call a provider without a key: the prompt keeps its text for later.
            self.prompt.load_text(text)
            self.chat.add("notice", "No model is configured, so nothing was sent; /setup.")
            self.open_setup()
            return
        # The prompt is shown as it is sent; the recorder's copy of it is not shown again.
        self.chat.add("user", text)
        if self.engine is None:
            if self.engine_error:
                self.chat.add("error", f"No agent: {self.engine_error}")
                return
            self._pending_prompt = (text, plan_goal)
            self.chat.add("notice", "Starting the agent…")
            return
        self._launch(text, plan_goal)

    def _launch(self, text: str, plan_goal: str | None) -> None:
        self.turn_running = True
        self._turn_closed = False
        self._set_state("thinking")
        self.turn_worker = self._run_turn(text, plan_goal)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def _run_turn(self, text: str, plan_goal: str | None) -> None:
        engine = self.engine
        assert engine is not None
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
                self.post_message(AnswerChunk("".join(pending)))
                pending.clear()

        if plan_goal is not None:
            stream = engine.plan(plan_goal)
        else:
            stream = engine.run_turn(text, await self._attachments(text))
        try:
            async with aclosing(stream) as events:
                async for event in events:
                    if isinstance(event, ev.AssistantDelta):
                        pending.append(event.text)
                        # Deltas go out together a moment later, however the stream pauses.
                        if timer is None:
                            timer = loop.call_later(DELTA_FLUSH_INTERVAL, flush)
                    else:
                        flush()
                        finished = finished or isinstance(event, ev.TURN_ENDINGS)
                        self.post_message(EngineEvent(event))
        except asyncio.CancelledError:
            flush()
            if not finished:
                self.post_message(EngineEvent(ev.TurnCancelled()))
            raise
        except Exception as exc:  # an engine bug is shown and logged, never raised
            log.exception("the turn's event stream failed")
            flush()
            error = f"{type(exc).__name__}: {exc}"
            self.post_message(EngineEvent(ev.TurnFailed(error, logs.internal_error_hint())))
            return
        flush()
        if not finished:  # the stream ended without its closing event: close the turn here
            self.post_message(EngineEvent(ev.TurnCancelled()))

    def action_cancel_turn(self) -> None:
        if self._write_worker is not None:
            self._write_worker.cancel()
        if self.turn_worker is None or self._turn_closed:
            return
        if self.engine is not None and self.engine.running:
            self.engine.cancel()  # the stream ends with TurnCancelled
        else:
            self.turn_worker.cancel()

    # ------------------------------------------------------------ engine events
    @on(AnswerChunk)
    def _answer_chunk(self, message: AnswerChunk) -> None:
        self._recorder.feed(ev.AssistantDelta(text=message.text))
        self.chat.stream_write(message.text)

    @on(EngineEvent)
    def _engine_event(self, message: EngineEvent) -> None:
        event = message.event
        if self._turn_closed and isinstance(event, ev.TURN_ENDINGS):
            return  # the turn was closed already (e.g. a cancel raced its last event)
        handler = getattr(self, f"_on_{event.kind}", None)
        if handler is not None:
            handler(event)
        for entry in self._recorder.feed(event):
            self._show(entry)
        if isinstance(event, ev.TURN_ENDINGS):
            self._end_turn(event)

    def _show(self, entry: DisplayEntry) -> None:
        """A recorded entry on screen, unless it is there already (the prompt, a streamed reply)."""
        if not isinstance(entry, ChatMessage) or entry.role == "user" or entry.streamed:
            return
        self.chat.add(entry.role, entry.text, foldable=entry.foldable)

    def _on_TurnStarted(self, event: ev.TurnStarted) -> None:
        self.status.step = 0
        self._set_state("thinking")

    def _on_StepStarted(self, event: ev.StepStarted) -> None:
        self.status.step = event.step
        self.status.max_steps = event.max_steps
        self.trace.step_started(event.step)
        self._set_state("thinking")

    def _on_ThoughtDelta(self, event: ev.ThoughtDelta) -> None:
        self.trace.thought(event.step, event.text)

    def _on_ToolCallStarted(self, event: ev.ToolCallStarted) -> None:
        # Text streamed before a tool call is the model thinking aloud: keep it in the chat.
        self.chat.stream_finish()
        self.trace.tool_started(event.step, event.call_id, event.tool, event.arguments)
        self._set_state("running a tool")

    def _on_ToolOutputDelta(self, event: ev.ToolOutputDelta) -> None:
        self.trace.tool_output(event.call_id, event.text)

    def _on_ToolCallFinished(self, event: ev.ToolCallFinished) -> None:
        self.trace.tool_finished(event.call_id, event.status, event.text, event.duration)
        self._set_state("thinking")

    def _on_PatchProposed(self, event: ev.PatchProposed) -> None:
        self._set_state("waiting for you")

    def _on_PatchResolved(self, event: ev.PatchResolved) -> None:
        self.refresh_sidebar()

    def _on_WriteLockWait(self, event: ev.WriteLockWait) -> None:
        self._set_state(LOCK_WAIT_STATE if event.phase == "waiting" else "running a tool")

    def _on_CommandApprovalNeeded(self, event: ev.CommandApprovalNeeded) -> None:
        self._set_state("waiting for you")

    def _on_TodoChanged(self, event: ev.TodoChanged) -> None:
        self.todos.set_items(event.items)

    def _on_NoteWritten(self, event: ev.NoteWritten) -> None:
        self.refresh_sidebar()

    def _on_AnswerRestarted(self, event: ev.AnswerRestarted) -> None:
        self.chat.stream_discard()

    def _on_ContextUsage(self, event: ev.ContextUsage) -> None:
        self.status.context = (event.used, event.budget)

    def _on_Usage(self, event: ev.Usage) -> None:
        # The event carries the session's totals: assign them.
        self.status.tokens = event.session_prompt_tokens + event.session_completion_tokens
        self.status.cost = event.cost

    def _end_turn(self, event: ev.Event) -> None:
        self.chat.stream_finish()
        if isinstance(event, ev.TurnFinished):
            self.notifier.notify(f"Turn finished: {event.answer or 'no answer'}")
        elif isinstance(event, ev.TurnFailed):
            self.notifier.notify(f"The turn failed: {event.error}")
        trace_status = {"TurnFinished": "answered", "TurnFailed": "error"}.get(
            event.kind, "cancelled"
        )
        self._turn_closed = True
        self._turn_interrupted = event.kind == "TurnCancelled"
        self.trace.turn_ended(trace_status)
        if self.engine is not None:
            self.status.protocol = self.engine.protocol
        self._set_state("idle")
        # The turn is over for the user once its last words are on screen.
        self.chat.call_when_shown(self._turn_shown)

    def _turn_shown(self) -> None:
        self.turn_running = False
        self.refresh_bindings()
        self.prompt.focus()
        self._after_turn()

    # ------------------------------------------------------------ notifications
    def _write_to_terminal(self, data: str) -> None:
        if self._driver is not None:
            self._driver.write(data)

    def _screen_changed(self, screen: Screen[Any]) -> None:
        """A decision modal starts waiting: call the user back if they are away."""
        if not isinstance(screen, DecisionModal) or screen in self._announced:
            return  # (a modal shown again after a dialog of its own is not news)
        self._announced.add(screen)
        names = [cls.__name__ for cls in type(screen).__mro__]
        text = next((WAITING_TEXT[n] for n in names if n in WAITING_TEXT), None)
        text = text or "A decision waits for you."
        command = getattr(screen, "command", None)
        if isinstance(command, str) and command:
            text = f"{text.removesuffix('.')}: {command}"  # which one, at a glance
        self.notifier.notify(text)

    # ------------------------------------------------------------ interrupt and queue
    def _turn_interruptible(self) -> bool:
        return self.turn_running and not self._turn_closed

    def _queue_prompt(self, text: str) -> None:
        """A message sent during a turn waits, shown as pending, until the turn ends."""
        self.queued.push(text)
        self.refresh_bindings()

    def _edit_queued(self) -> str | None:
        """↑ on an empty prompt: the newest queued message comes back to be edited."""
        text = self.queued.take_last()
        self.refresh_bindings()
        return text

    def action_drop_queued(self) -> None:
        dropped = self.queued.take_last()
        self.refresh_bindings()
        if dropped is not None:
            self.notify("Queued message dropped.", timeout=3)

    def _after_turn(self) -> None:
        """The turn is over on screen: send the next queued message, or hand them back."""
        if not self.queued.items:
            return
        if self._turn_interrupted:
            # The user stopped the agent: what they queued is theirs to send again.
            texts = self.queued.take_all()
            draft = self.prompt.text.strip()
            self.prompt.load_text("\n\n".join([*texts, draft] if draft else texts))
            self.prompt.move_cursor(self.prompt.document.end)
            back = (
                "your queued message is"
                if len(texts) == 1
                else f"your {len(texts)} queued messages are"
            )
            self.chat.add("notice", f"Turn interrupted; {back} back in the prompt.")
            self.refresh_bindings()
            return
        text = self.queued.take_first()
        self.refresh_bindings()
        if text is not None:
            self.handle_input(text)

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state == WorkerState.ERROR and worker.group in ("startup", "preflight"):
            log.error("%s failed", worker.name, exc_info=worker.error)
            self.chat.add("error", f"{worker.name}: {worker.error}")
        if (
            worker is self.turn_worker
            and event.state in (WorkerState.CANCELLED, WorkerState.ERROR)
            and not self._turn_closed
        ):
            # The worker ended without its closing event reaching us.
            self.post_message(EngineEvent(ev.TurnCancelled()))

    # ------------------------------------------------------------ actions
    def action_ctrl_c(self) -> None:
        """Interrupt the running turn; else clear the prompt; on an empty prompt, twice quits."""
        if self._turn_interruptible():
            self.action_cancel_turn()
            self._last_ctrl_c = -CTRL_C_WINDOW * 2
            self.notify("Interrupting the turn…", timeout=CTRL_C_WINDOW)
            return
        if self.prompt.text:
            self.prompt.clear_keeping_history()
            self._last_ctrl_c = -CTRL_C_WINDOW * 2
            return
        now = time.monotonic()
        if now - self._last_ctrl_c <= CTRL_C_WINDOW:
            self.exit(0)
            return
        self._last_ctrl_c = now
        self.notify("Press ctrl+c again to quit.", timeout=CTRL_C_WINDOW)

    def action_page_chat(self, direction: int) -> None:
        """PgUp / PgDn on the main screen: the chat scrolls, the focus stays where it is."""
        if direction < 0:
            self.chat.scroll_page_up(animate=False)
        else:
            self.chat.scroll_page_down(animate=False)

    def action_toggle_fold(self) -> None:
        if not self.chat.toggle_newest_fold():
            self.notify("Nothing in the chat to fold or unfold.", severity="warning")

    def action_help(self) -> None:
        from hello_tui.screens.help import HelpScreen

        self.push_screen(HelpScreen(self.help_text()))

    def help_text(self) -> str:
        """The help page, from the command table and the real bindings of every screen."""
        from hello_tui.screens.command_approval import CommandApprovalScreen
        from hello_tui.screens.command_table import help_markdown
        from hello_tui.screens.picker import PickerScreen
        from hello_tui.screens.review import PatchReviewScreen
        from hello_tui.widgets.diff_view import DiffView
        from hello_tui.widgets.sidebar import BackupTree, NotesList
        from hello_tui.widgets.trace import TracePanel

        return help_markdown(
            [
                ("Main screen", [*self.BINDINGS, Binding("ctrl+p", "command_palette", "Commands")]),
                ("Patch review", [*PatchReviewScreen.BINDINGS, *DiffView.BINDINGS]),
                ("Command approval", CommandApprovalScreen.BINDINGS),
                ("Sidebar", [*NotesList.BINDINGS, *BackupTree.BINDINGS]),
                ("Trace", TracePanel.BINDINGS),
                ("Pickers (/resume, /model)", PickerScreen.BINDINGS),
            ]
        )

    def action_clear(self) -> None:
        if self.turn_running or self.engine is None:
            self.chat.add("notice", "Wait for the turn to finish before /clear.")
            return
        self._clear_context()

    @work(group="sessions", exclusive=True, exit_on_error=False)
    async def _clear_context(self) -> None:
        assert self.engine is not None
        divider = await self.engine.clear_context()
        # The screen starts afresh too; a resume shows the earlier chat above the divider.
        self.chat.clear()
        self.trace.clear()
        self.chat.add("notice", divider)

    def action_toggle_sidebar(self) -> None:
        sidebar = self.sidebar
        sidebar.display = not sidebar.display
        self.set_class(sidebar.display, "-sidebar-open")
        if sidebar.display:
            self.refresh_sidebar()
            sidebar.query_one("#notes-list").focus()
        else:
            self.prompt.focus()

    def refresh_sidebar(self) -> None:
        if self.sidebar.display and self.engine is not None:
            self._load_sidebar()

    @work(group="sidebar", exclusive=True, exit_on_error=False)
    async def _load_sidebar(self) -> None:
        assert self.engine is not None
        try:
            notes = await self.engine.notes()
        except Exception as exc:  # a broken notes folder must not break the app
            log.exception("notes could not be read")
            self.notify(f"Could not read notes: {exc}", severity="error")
            notes = []
        try:
            backups = await self.engine.backups()
        except Exception as exc:  # the same
            log.exception("backups could not be read")
            self.notify(f"Could not read backups: {exc}", severity="error")
            backups = []
        self.sidebar.set_notes(notes)
        self.sidebar.set_backups(backups)

    @on(Sidebar.NoteChosen)
    def _note_chosen(self, message: Sidebar.NoteChosen) -> None:
        self._open_note(message.note_id)

    @work(group="viewer", exit_on_error=False)
    async def _open_note(self, note_id: str) -> None:
        from hello_tui.engine.types import NoteError
        from hello_tui.screens.note_viewer import NoteViewerScreen

        assert self.engine is not None
        try:
            note = await self.engine.read_note(note_id)
        except NoteError as exc:
            self.notify(str(exc), severity="error")
            return
        meta = f"{note.note_type} · {note.updated_at} · {', '.join(note.tags)}"
        self.push_screen(NoteViewerScreen(note.title, note.content, meta))

    @on(Sidebar.BackupFileChosen)
    def _backup_chosen(self, message: Sidebar.BackupFileChosen) -> None:
        self._open_backup(message.pick)

    @work(group="viewer", exit_on_error=False)
    async def _open_backup(self, pick: BackupPick) -> None:
        from hello_tui.screens.backup_diff import BackupDiffScreen

        assert self.engine is not None and pick.relpath is not None
        compared = await self.engine.compare_backup(pick.backup, pick.relpath)
        if compared.old is None:
            self.notify(f"{pick.backup} holds no copy of {pick.relpath}.", severity="error")
            return
        title = f"{pick.relpath}: backup {pick.backup} (left) vs now (right)"
        self.push_screen(BackupDiffScreen(title, compared.old, compared.current, path=pick.relpath))

    @on(BackupTree.RestoreRequested)
    def _restore_requested(self, message: BackupTree.RestoreRequested) -> None:
        self._confirm_restore(message.pick)

    @work(group="write", exit_on_error=False)
    async def _confirm_restore(self, pick: BackupPick) -> None:
        from hello_tui.screens.confirm import ConfirmScreen

        if self.turn_running or self.engine is None:
            self.notify("Wait for the turn to finish before restoring.", severity="warning")
            return
        what = f"{pick.relpath}" if pick.relpath else "every file of this backup"
        question = ConfirmScreen(
            "Restore from backup?",
            f"Overwrite {what} with the copy saved in {pick.backup}.\n"
            "The current version is backed up first, so /undo brings it back.",
            yes_label="Restore (y)",
            no_label="Cancel (n)",
        )
        if not await self.push_screen_wait(question):
            return
        engine = self.engine
        await self._revert(lambda wait: engine.restore(pick.backup, pick.relpath, wait), "Restore")

    def action_undo(self) -> None:
        if self.turn_running or self.engine is None:
            self.chat.add("notice", "Wait for the turn to finish before /undo.")
            return
        self._undo()

    @work(group="write", exit_on_error=False)
    async def _undo(self) -> None:
        engine = self.engine
        assert engine is not None
        await self._revert(engine.undo, "Undo")

    def action_compact(self) -> None:
        if self.turn_running or self.engine is None:
            self.chat.add("notice", "Wait for the turn to finish before /compact.")
            return
        self._compact()

    @work(group="write", exit_on_error=False)
    async def _compact(self) -> None:
        engine = self.engine
        assert engine is not None
        self.chat.add("notice", "Compacting the conversation…")
        result = await engine.compact()
        self.chat.add("notice", result.text)

    def action_redo(self) -> None:
        if self.turn_running or self.engine is None:
            self.chat.add("notice", "Wait for the turn to finish before /redo.")
            return
        self._redo()

    @work(group="write", exit_on_error=False)
    async def _redo(self) -> None:
        engine = self.engine
        assert engine is not None
        await self._revert(engine.redo, "Redo")

    async def _revert(self, call: Callable[[Any], Awaitable[Any]], what: str) -> None:
        """Run an undo or restore; while it waits for another process's lock, Esc ends it."""
        from hello_tui.engine.types import PatchError

        worker = self._current_worker()

        def waiting(text: str) -> None:
            self._write_worker = worker
            self.chat.add("notice", text)
            self._set_state(LOCK_WAIT_STATE)

        try:
            reverted = await call(waiting)
        except asyncio.CancelledError:
            self.chat.add("notice", f"{what} cancelled: nothing was changed.")
            raise
        except (PatchError, OSError) as exc:  # "nothing to undo" and friends are messages
            self.chat.add("error", f"{what} failed: {exc}")
            return
        except Exception as exc:  # an engine bug is shown and logged
            log.exception("%s failed", what)
            self.chat.add("error", f"{what} failed: {exc} ({logs.internal_error_hint()})")
            return
        finally:
            self._write_worker = None
            if self._turn_closed:
                self._set_state("idle")
        self.chat.add("result", reverted.text)
        self.refresh_sidebar()

    @staticmethod
    def _current_worker() -> Worker[Any] | None:
        from textual.worker import NoActiveWorker, get_current_worker

        try:
            return get_current_worker()
        except NoActiveWorker:
            return None

    def action_resume_list(self) -> None:
        if self.turn_running:
            self.chat.add("notice", "Finish or cancel (Esc) the running turn first.")
            return
        if self.engine is not None:
            self._pick_session()

    @work(group="picker", exit_on_error=False)
    async def _pick_session(self) -> None:
        """The session picker: title, date, turns and model of each, the current one marked."""
        from hello_tui.screens.picker import PickerScreen, PickItem

        assert self.engine is not None
        infos = await self.engine.sessions(limit=SESSION_PICKER_LIMIT)
        if not infos:
            self.chat.add("notice", "No saved sessions yet.")
            return
        current = self.engine.session_id
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
        chosen = await self.push_screen_wait(PickerScreen("Resume a session", items))
        if chosen and chosen != current:
            self.resume_session(chosen)

    def resume_session(self, session_id: str) -> None:
        """Switch this window to a saved session: its chat, todos and model history."""
        if self.turn_running:
            self.chat.add("notice", "Finish or cancel (Esc) the running turn first.")
            return
        if self.engine is not None:
            self._switch_session(session_id)

    @work(group="sessions", exclusive=True, exit_on_error=False)
    async def _switch_session(self, session_id: str) -> None:
        from hello_tui.engine.types import SessionError, SessionNotFound

        engine = self.engine
        assert engine is not None
        try:
            await engine.load_session(session_id)
            start = EngineStart(engine, engine.display(), await engine.todos(), [])
        except SessionNotFound:
            self.chat.add("error", f"No saved session `{session_id}`; `/resume` lists them.")
            return
        except SessionError as exc:  # unreadable: it was set aside, the message says where
            log.warning("resume %s failed: %s", session_id, exc)
            self.chat.add("error", str(exc).replace("Starting a new session.", "").strip())
            return
        self.chat.clear()
        self.trace.clear()
        self._show_session(start)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Help", "Keys and commands", self.action_help)
        yield SystemCommand("Toggle sidebar", "Notes and backups", self.action_toggle_sidebar)
        yield SystemCommand(
            "Undo last patch", "Restore the files of the last patch", self.action_undo
        )
        yield SystemCommand("Clear chat", "Clear the chat and trace", self.action_clear)
        yield SystemCommand("Resume session", "List saved sessions", self.action_resume_list)
        yield SystemCommand(
            "Plan", "Ask for a plan: type :plan <goal> in the prompt", self._prefill_plan
        )
        if self.turn_running:
            yield SystemCommand("Cancel turn", "Stop the running turn", self.action_cancel_turn)

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """The palette's "Save screenshot" writes into the state folder (a ~/Downloads may
        not exist) and says where."""
        if path is None:
            folder = self.settings.state.ensure() / "screenshots"
            folder.mkdir(exist_ok=True)
            path = str(folder)
        key = super().deliver_screenshot(filename, path, time_format)
        self.notify(f"Screenshot saved in {path}", title="Screenshot")
        return key

    def _prefill_plan(self) -> None:
        self.prompt.load_text(":plan ")
        self.prompt.move_cursor(self.prompt.document.end)
        self.prompt.focus()

    # ------------------------------------------------------------ slash commands and modes
    def run_slash_command(self, text: str) -> bool:
        """A `/name args` line of the command table: run its `command_<name>`; False if not one."""
        from hello_tui.screens.command_table import command_named

        if not text.startswith("/"):
            return False
        name, _, args = text[1:].partition(" ")
        command = command_named(name.lower())
        if command is None:
            return False
        getattr(self, command.handler)(args.strip())
        return True

    def command_help(self, args: str) -> None:
        self.action_help()

    def command_copy(self, args: str) -> None:
        """`/copy [N]`: the last answer, or its code block N, on the clipboard (OSC 52)."""
        from hello_tui.widgets.chat_copy import choose_copy

        answer = self.chat.history.last_answer()
        choice = choose_copy(answer.text if answer is not None else None, args)
        if choice.text is None:
            self.notify(choice.message, title="Nothing copied", severity="warning", timeout=6)
            return
        self.copy_to_clipboard(choice.text)
        self.notify(choice.message, title="Copied", timeout=4)

    def command_clear(self, args: str) -> None:
        self.action_clear()

    def command_undo(self, args: str) -> None:
        self.action_undo()

    def command_redo(self, args: str) -> None:
        self.action_redo()

    def command_compact(self, args: str) -> None:
        self.action_compact()

    def command_mcp(self, args: str) -> None:
        self.show_mcp_servers()

    def command_resume(self, args: str) -> None:
        if args:
            self.resume_session(args)
        else:
            self.action_resume_list()

    def command_new(self, args: str) -> None:
        if self.turn_running or self.engine is None:
            self.chat.add("notice", "Wait for the turn to finish before /new.")
            return
        self._new_session()

    @work(group="sessions", exclusive=True, exit_on_error=False)
    async def _new_session(self) -> None:
        engine = self.engine
        assert engine is not None
        await engine.new_session()
        self.chat.clear()
        self.trace.clear()
        self._show_session(EngineStart(engine, [], [], []))
        self.chat.add("notice", f"New session `{engine.session_id}`.")

    def command_mode(self, args: str) -> None:
        if not args:
            mode = self.engine.mode if self.engine is not None else self.settings.mode
            self.chat.add("notice", f"Permission mode: {mode} (shift+tab cycles).")
            return
        self.set_mode(args)

    def action_cycle_mode(self) -> None:
        from hello_tui.engine.types import next_mode

        if self.engine is not None:
            self.set_mode(next_mode(self.engine.mode))

    def set_mode(self, name: str) -> None:
        """Switch the permission mode; the engine applies it from its next decision on."""
        if self.engine is None:
            self.chat.add("notice", "The agent is still starting; try again in a moment.")
            return
        try:
            mode = self.engine.set_mode(name)
        except ValueError as exc:
            self.chat.add("error", str(exc))
            return
        self.status.mode = mode
        self.notify(MODE_NOTICES[mode], title=f"Mode: {mode}", timeout=4)

    def command_model(self, args: str) -> None:
        if self.engine is None:
            self.chat.add("notice", "The agent is still starting; try again in a moment.")
            return
        if args:
            self.switch_model(args)
        else:
            self._pick_model()

    def switch_model(self, name: str) -> None:
        assert self.engine is not None
        try:
            self.engine.set_model(name)
        except ValueError as exc:
            self.chat.add("error", str(exc))
            return
        self.status.model = self.engine.model
        self.chat.add("notice", f"Model: `{self.engine.model}` for the rest of this session.")

    @work(group="picker", exit_on_error=False)
    async def _pick_model(self) -> None:
        from hello_tui.screens.picker import PickerScreen, PickItem

        engine = self.engine
        assert engine is not None
        first = PickItem(engine.model, engine.model, current=True, group="in use")
        picker = PickerScreen("Choose a model", [first])
        self.push_screen(picker, self._model_picked)
        offered = await engine.model_choices()
        picker.add_items(
            [
                PickItem(
                    c.name,
                    c.name,
                    "" if c.usable else "another provider's: needs its own endpoint",
                    current=c.name == engine.model,
                    group=c.group,
                )
                for c in offered.choices
            ]
        )
        if offered.endpoint_error and picker.is_attached:
            picker.notify(
                f"The endpoint's model list: {offered.endpoint_error}", severity="warning"
            )

    def _model_picked(self, name: str | None) -> None:
        if not name or self.engine is None:
            return
        from hello_tui.config import PROVIDERS

        other = next(
            (p for p in PROVIDERS if p.model == name and p.name != self.settings.provider), None
        )
        if other is not None and other.model != self.engine.model:
            self.chat.add(
                "notice",
                f"`{name}` is {other.name}'s model: start hello-tui with "
                f"`--base-url {other.base_url}` and {' or '.join(other.key_vars)} set to use it.",
            )
            return
        self.switch_model(name)

    def command_setup(self, args: str) -> None:
        self.open_setup()

    def open_setup(self, problem: str = "") -> None:
        """The setup dialog; a key saved there goes to the user config, and the agent restarts
        with it."""
        from hello_tui.screens.setup_help import SetupHelpScreen
        from hello_tui.userconfig import config_path

        if isinstance(self.screen, SetupHelpScreen):
            return
        self.push_screen(SetupHelpScreen(problem, str(config_path())), self._setup_done)

    def _setup_done(self, choice: Any) -> None:
        if choice is not None:
            self._save_key(choice)

    @work(group="setup", exclusive=True, exit_on_error=False)
    async def _save_key(self, choice: Any) -> None:
        from hello_tui.config import PROVIDER_BY_NAME
        from hello_tui.userconfig import UserConfigError, config_path, save_key

        path = config_path()
        try:
            await asyncio.to_thread(save_key, path, choice.provider, choice.key)
        except (OSError, UserConfigError) as exc:
            self.chat.add("error", f"The key could not be saved: {exc}")
            return
        provider = PROVIDER_BY_NAME[choice.provider]
        # A model the user named (flag or environment) stays; otherwise the provider's default.
        keep_model = self.settings.sources.get("model", "").startswith(("flag", "env"))
        self.settings = dataclasses.replace(
            self.settings,
            api_key=choice.key,
            provider=provider.name,
            base_url=provider.base_url,
            model=self.settings.model if keep_model else provider.model,
            sources={**self.settings.sources, "api_key": "user config", "base_url": "user config"},
        )
        self.chat.add("notice", f"Key for {provider.name} saved in `{path}`; restarting the agent…")
        old, self.engine = self.engine, None
        if old is not None:
            await old.aclose()
        self.engine_error = ""
        self.status.model = self.settings.model
        self._set_state("starting")
        self._open_engine()

    def command_init(self, args: str) -> None:
        self._start_turn(INIT_PROMPT)

    # ------------------------------------------------------------ completion and attachments
    @on(TextArea.Changed, "#prompt")
    def _prompt_changed(self, event: TextArea.Changed) -> None:
        self.update_completion()

    def update_completion(self) -> None:
        """Suggestions for the word at the cursor, and chips for the files mentioned."""
        from hello_tui.screens.command_table import matching_commands

        text = self.prompt.text
        row, column = self.prompt.cursor_location
        lines = text.split("\n")
        cursor = sum(len(line) + 1 for line in lines[:row]) + column
        target = completion_target(text, cursor)
        suggestions: list[Suggestion] = []
        if target is not None and target.kind == "slash":
            suggestions = [
                Suggestion(c.name, c.help, c.usage) for c in matching_commands(target.typed)
            ]
            if len(suggestions) == 1 and suggestions[0].value == target.typed:
                suggestions = []  # typed in full: nothing left to complete
        elif target is not None and self.engine is not None:
            index = self.engine.file_index()
            found = index.search(target.typed, limit=FILE_SUGGESTIONS)
            suggestions = [Suggestion(path) for path in found if path != target.typed]
        if suggestions and target is not None:
            self.completion.show(target, suggestions)
        else:
            self.completion.hide()
        self.chips.set_paths(self._attachable(mentioned_paths(text)))

    def _attachable(self, paths: list[str]) -> list[str]:
        if self.engine is None:
            return []
        index = self.engine.file_index()
        return [p for p in paths if p in index]

    async def _attachments(self, text: str) -> list[Attachment]:
        """The files the prompt mentions with `@path`, read (and cut) for the message."""
        assert self.engine is not None
        attached = []
        for path in self._attachable(mentioned_paths(text)):
            try:
                attached.append(await self.engine.attachment(path))
            except (ValueError, OSError) as exc:
                self.chat.add("notice", f"Not attached: {exc}")
        if attached:
            chips = ", ".join(f"`{a.path}`" + (" (cut)" if a.cut else "") for a in attached)
            self.chat.add("notice", f"📎 Attached: {chips}")
        return attached

    @on(CompletionList.Chosen)
    def _completion_chosen(self, message: CompletionList.Chosen) -> None:
        target = message.target
        text = self.prompt.text
        prefix = "/" if target.kind == "slash" else "@"
        replacement = prefix + message.suggestion.value + " "
        new_text = text[: target.start] + replacement + text[target.end :].lstrip(" ")
        self.prompt.load_text(new_text)
        cursor = target.start + len(replacement)
        before = new_text[:cursor]
        self.prompt.move_cursor((before.count("\n"), len(before.rsplit("\n", 1)[-1])))
        self.completion.hide()

    # ------------------------------------------------------------ !command
    def run_shell_line(self, text: str) -> bool:
        """`!cmd`: the user's own command through the terminal's policy and sandbox."""
        if not text.startswith("!"):
            return False
        command = text[1:].strip()
        if not command:
            self.chat.add("notice", "Type a command after `!`, e.g. `!git status`.")
            return True
        if self.turn_running or self.engine is None:
            self.chat.add("notice", "Wait for the turn to finish before running a command.")
            return True
        self.chat.add("user", text)
        self._run_user_command(command)
        return True

    @work(group="turn", exclusive=True, exit_on_error=False)
    async def _run_user_command(self, command: str) -> None:
        engine = self.engine
        assert engine is not None
        self.turn_running = True
        self._set_state("running a tool")
        try:
            result = await engine.run_user_command(command)
        except Exception as exc:  # shown and logged; the app stays usable
            log.exception("!%s failed", command)
            self.chat.add("error", f"`!{command}` failed: {exc}")
            return
        finally:
            self.turn_running = False
            self._set_state("idle")
        role = "error" if result.status == "error" else "notice"
        self.chat.add(role, fence(result.text, "text"))

    # ------------------------------------------------------------ errors
    def _handle_exception(self, error: Exception) -> None:
        # A bug in a handler ends the app (Textual's rule); its traceback goes to the log.
        log.critical("unhandled error in the app", exc_info=error)
        super()._handle_exception(error)

    def _fatal_error(self) -> None:
        # Instead of Textual's full-screen traceback: one line naming the log file.
        self.bell()
        where = logs.current_log_file() or "the log (run with --debug)"
        self._exit_renderables.append(
            Text(f"hello-tui: internal error; details are in {where}", style="bold red")
        )
        self._close_messages_no_wait()


def run_tui(args: Any) -> int:
    """`hello-tui [--repo DIR] [model flags]`: open the app; exit 2 on a configuration error."""
    import sys

    from hello_tui.config import settings_from_args

    try:
        settings = settings_from_args(args)
    except ConfigError as exc:
        print(f"hello-tui: {exc}", file=sys.stderr)
        return 2
    logs.configure(settings)
    app = HelloApp(
        settings,
        resume=getattr(args, "resume", None),
        continue_latest=bool(getattr(args, "continue_", False)),
    )
    result = app.run()
    return int(result or 0)
